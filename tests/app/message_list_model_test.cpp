// The chat view's message model: rows from records, live content of a
// streaming reply, activity, truncation, and the roles QML binds to.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

#include "chat/MessageListModel.h"

using namespace weir::desktop;

namespace {
MessageRecord msg(qint64 id, int position, const char* role, const char* text,
                  MessageState state = MessageState::Complete) {
    MessageRecord m;
    m.id = id;
    m.conversationId = 1;
    m.position = position;
    m.role = QString::fromLatin1(role);
    m.content = QString::fromLatin1(text);
    m.state = state;
    return m;
}
int role(const MessageListModel& model, const char* name) {
    const auto names = model.roleNames();
    for (auto it = names.begin(); it != names.end(); ++it)
        if (it.value() == name) return it.key();
    return -1;
}
} // namespace

class MessageListModelTest : public QObject {
    Q_OBJECT
private slots:
    void rolesAndRows() {
        MessageListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setMessages({msg(1, 0, "user", "hi"), msg(2, 1, "assistant", "Hello\n```py\nx\n```")});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.data(model.index(0), role(model, "role")).toString(), QStringLiteral("user"));
        QCOMPARE(model.data(model.index(1), role(model, "isLast")).toBool(), true);
        QCOMPARE(model.data(model.index(0), role(model, "isLast")).toBool(), false);
        auto* parts = qobject_cast<MessagePartsModel*>(model.data(model.index(1), role(model, "parts")).value<QObject*>());
        QVERIFY(parts);
        QCOMPARE(parts->rowCount(), 2);
        QCOMPARE(model.data(model.index(1), role(model, "state")).toString(), QStringLiteral("complete"));
    }

    // The stats line's speculative decoding counts: what the record holds,
    // also after an update (a reply ending).
    void draftCountRoles() {
        MessageListModel model;
        MessageRecord reply = msg(2, 1, "assistant", "a");
        model.setMessages({msg(1, 0, "user", "q"), reply});
        QCOMPARE(model.data(model.index(1), role(model, "draftTokens")).toInt(), 0);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        reply.draftTokens = 57;
        reply.acceptedDraftTokens = 42;
        model.update(reply);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.data(model.index(1), role(model, "draftTokens")).toInt(), 57);
        QCOMPARE(model.data(model.index(1), role(model, "acceptedDraftTokens")).toInt(), 42);
        QCOMPARE(model.get(1).value(QStringLiteral("acceptedDraftTokens")).toInt(), 42);
    }

    void streamingContentAndActivity() {
        MessageListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setMessages({msg(1, 0, "user", "hi")});
        model.append(msg(2, 1, "assistant", "", MessageState::Streaming));
        QCOMPARE(model.data(model.index(0), role(model, "isLast")).toBool(), false);

        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.setActivity(2, QStringLiteral("waiting"), 2);
        QCOMPARE(model.data(model.index(1), role(model, "activity")).toString(), QStringLiteral("waiting"));
        QCOMPARE(model.data(model.index(1), role(model, "queuePosition")).toInt(), 2);
        model.setContent(2, QStringLiteral("Hel"));
        model.setContent(2, QStringLiteral("Hello"));
        QCOMPARE(model.data(model.index(1), role(model, "content")).toString(), QStringLiteral("Hello"));
        QCOMPARE(changed.count(), 3);

        MessageRecord done = msg(2, 1, "assistant", "Hello there", MessageState::Complete);
        done.completionTokens = 3;
        done.tokensPerSecond = 42.5;
        model.update(done);
        QCOMPARE(model.data(model.index(1), role(model, "activity")).toString(), QString());
        QCOMPARE(model.data(model.index(1), role(model, "completionTokens")).toInt(), 3);
        QCOMPARE(model.data(model.index(1), role(model, "tokensPerSecond")).toDouble(), 42.5);
    }

    void removeFromPosition() {
        MessageListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setMessages({msg(1, 0, "user", "a"), msg(2, 1, "assistant", "b"), msg(3, 2, "user", "c"),
                           msg(4, 3, "assistant", "d")});
        model.removeFrom(2);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.data(model.index(1), role(model, "isLast")).toBool(), true);
        QCOMPARE(model.rowOf(4), -1);
        QCOMPARE(model.get(1).value(QStringLiteral("content")).toString(), QStringLiteral("b"));
    }
};

QTEST_GUILESS_MAIN(MessageListModelTest)
#include "message_list_model_test.moc"
