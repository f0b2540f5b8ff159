// Sidebar titles from a first message: the words a user reads, without the
// Markdown around them.
#include <QTest>

#include "chat/ConversationTitle.h"

using namespace weir::desktop;

class ConversationTitleTest : public QObject {
    Q_OBJECT
private slots:
    void markdownSyntaxIsDropped_data() {
        QTest::addColumn<QString>("message");
        QTest::addColumn<QString>("title");
        QTest::newRow("heading") << "## Plan for **today**" << "Plan for today";
        QTest::newRow("quote") << "> quoted *words*" << "quoted words";
        QTest::newRow("bullet") << "- [ ] buy `milk`" << "buy milk";
        QTest::newRow("numbered") << "1. First step" << "First step";
        QTest::newRow("link") << "See [the docs](https://example.com/x) now" << "See the docs now";
        QTest::newRow("image") << "![a cat](cat.png) is here" << "a cat is here";
        QTest::newRow("snake_case kept") << "rename my_var_name please" << "rename my_var_name please";
        QTest::newRow("underscore emphasis") << "this is _important_" << "this is important";
        QTest::newRow("fence first") << "```python\nprint(1)\n```\nWhy does this print?" << "Why does this print?";
        QTest::newRow("blank lines first") << "\n\n  Hello  there \n" << "Hello there";
        QTest::newRow("table") << "| a | b |\n|---|---|" << "a b";
        QTest::newRow("only code") << "```\n\nx = 1\ny = 2\n```" << "x = 1";
    }
    void markdownSyntaxIsDropped() {
        QFETCH(QString, message);
        QFETCH(QString, title);
        QCOMPARE(titleFromMessage(message), title);
    }

    void longTitlesAreCutAtAWord() {
        const QString title = titleFromMessage(QStringLiteral(
            "Explain how the sliding window attention layers of Gemma keep their cache small"));
        QVERIFY(title.size() <= 49);
        QVERIFY(title.endsWith(QChar(0x2026)));
        QVERIFY(title.startsWith(QStringLiteral("Explain how the sliding window attention")));
        QVERIFY(!title.contains(QStringLiteral("  ")));
    }
};

QTEST_GUILESS_MAIN(ConversationTitleTest)
#include "conversation_title_test.moc"
