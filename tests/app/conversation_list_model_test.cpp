// The sidebar model: most recent first, upsert moves rows, activity markers
// survive reloads, sections by day.
#include <QAbstractItemModelTester>
#include <QDateTime>
#include <QTest>

#include "chat/ConversationListModel.h"

using namespace weir::desktop;

namespace {
ConversationRecord conv(qint64 id, const char* title, qint64 updatedAt) {
    ConversationRecord c;
    c.id = id;
    c.title = QString::fromLatin1(title);
    c.createdAt = c.updatedAt = updatedAt;
    return c;
}
QList<qint64> ids(const ConversationListModel& m) {
    QList<qint64> out;
    for (int i = 0; i < m.rowCount(); ++i) out.append(m.idAt(i));
    return out;
}
} // namespace

class ConversationListModelTest : public QObject {
    Q_OBJECT
private slots:
    void orderAndUpsert() {
        ConversationListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        model.setConversations({conv(1, "old", now - 3000), conv(2, "new", now - 1000), conv(3, "mid", now - 2000)});
        QCOMPARE(ids(model), (QList<qint64>{2, 3, 1}));

        model.upsert(conv(1, "old, touched", now));  // moves to the top
        QCOMPARE(ids(model), (QList<qint64>{1, 2, 3}));
        QCOMPARE(model.data(model.index(0), ConversationListModel::TitleRole).toString(), QStringLiteral("old, touched"));

        model.upsert(conv(4, "", now - 1500));  // inserted in order; empty title shows a placeholder
        QCOMPARE(ids(model), (QList<qint64>{1, 2, 4, 3}));
        QCOMPARE(model.data(model.index(2), ConversationListModel::TitleRole).toString(), QStringLiteral("New conversation"));

        model.remove(2);
        QCOMPARE(ids(model), (QList<qint64>{1, 4, 3}));
        QCOMPARE(model.rowOf(2), -1);
    }

    void activitySurvivesReload() {
        ConversationListModel model;
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        model.setConversations({conv(1, "a", now), conv(2, "b", now - 1)});
        model.setActivity(2, QStringLiteral("waiting"), 1);
        model.setConversations({conv(1, "a", now), conv(2, "b", now - 1)});
        QCOMPARE(model.data(model.index(1), ConversationListModel::ActivityRole).toString(), QStringLiteral("waiting"));
        QCOMPARE(model.data(model.index(1), ConversationListModel::QueuePositionRole).toInt(), 1);
        model.setActivity(2, QString());
        QCOMPARE(model.data(model.index(1), ConversationListModel::ActivityRole).toString(), QString());
    }

    // A search result carries the text around the match and the message it is in.
    void searchSnippets() {
        ConversationListModel model;
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        const QString content = QStringLiteral("First we set up the build.\n\nThen   the quokka walks in, smiling at everyone it meets "
                                               "along the road to the river, where the rest of a very long story goes on.");
        ConversationListModel::SearchMatch match{42, searchSnippet(content, QStringLiteral("QUOKKA"))};
        model.setConversations({conv(1, "a", now), conv(2, "b", now - 1)}, {{2, match}});
        const QModelIndex row = model.index(model.rowOf(2));
        const QString snippet = model.data(row, ConversationListModel::SnippetRole).toString();
        const int start = model.data(row, ConversationListModel::SnippetMatchStartRole).toInt();
        QCOMPARE(snippet.mid(start, model.data(row, ConversationListModel::SnippetMatchLengthRole).toInt()), QStringLiteral("quokka"));
        QVERIFY2(snippet.startsWith(QStringLiteral("\u2026")) && snippet.endsWith(QStringLiteral("\u2026")), qPrintable(snippet));
        QVERIFY(!snippet.contains(QStringLiteral("  ")) && !snippet.contains(u'\n'));  // one line
        QVERIFY(snippet.contains(QStringLiteral("Then the quokka")));
        QCOMPARE(model.data(row, ConversationListModel::MatchMessageIdRole).toLongLong(), 42);
        // Only the title matched: no snippet.
        QCOMPARE(model.data(model.index(model.rowOf(1)), ConversationListModel::SnippetRole).toString(), QString());
        QCOMPARE(model.data(model.index(model.rowOf(1)), ConversationListModel::SnippetMatchStartRole).toInt(), -1);

        // Short text: whole, no ellipsis; no match: the start.
        const SearchSnippet whole = searchSnippet(QStringLiteral("a short note"), QStringLiteral("short"));
        QCOMPARE(whole.text, QStringLiteral("a short note"));
        QCOMPARE(whole.matchStart, 2);
        const SearchSnippet none = searchSnippet(QStringLiteral("nothing here"), QStringLiteral("zebra"));
        QCOMPARE(none.text, QStringLiteral("nothing here"));
        QCOMPARE(none.matchStart, -1);
    }

    void sections() {
        ConversationListModel model;
        const QDateTime now = QDateTime::currentDateTime();
        model.setConversations({conv(1, "today", now.toMSecsSinceEpoch()),
                                conv(2, "yesterday", now.addDays(-1).toMSecsSinceEpoch()),
                                conv(3, "week", now.addDays(-4).toMSecsSinceEpoch()),
                                conv(4, "older", now.addDays(-30).toMSecsSinceEpoch())});
        QCOMPARE(model.data(model.index(0), ConversationListModel::SectionRole).toString(), QStringLiteral("Today"));
        QCOMPARE(model.data(model.index(1), ConversationListModel::SectionRole).toString(), QStringLiteral("Yesterday"));
        QCOMPARE(model.data(model.index(2), ConversationListModel::SectionRole).toString(), QStringLiteral("Previous 7 days"));
        QCOMPARE(model.data(model.index(3), ConversationListModel::SectionRole).toString(), QStringLiteral("Older"));
    }
};

QTEST_GUILESS_MAIN(ConversationListModelTest)
#include "conversation_list_model_test.moc"
