// Export as Markdown and JSON, import from JSON: a round trip through the
// database keeps every message, state, usage figure, setting and tool call;
// bad input is refused with a message naming the problem.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "storage/ConversationExport.h"
#include "storage/Storage.h"

using namespace weir::desktop;

namespace {
ConversationDocument sample() {
    ConversationDocument d;
    d.conversation.title = QStringLiteral("Sorting in C++");
    d.conversation.settings.systemPrompt = QStringLiteral("You are terse.");
    d.conversation.settings.temperature = 0.2;
    d.conversation.settings.topP = 0.9;
    d.conversation.settings.topK = 20;
    d.conversation.settings.maxTokens = 300;
    d.conversation.settings.seed = 77;
    d.conversation.settings.engine = QStringLiteral("gpu-box");
    MessageRecord u;
    u.role = QStringLiteral("user");
    u.content = QStringLiteral("How do I sort?");
    MessageRecord a;
    a.role = QStringLiteral("assistant");
    a.content = QStringLiteral("Use `std::sort`:\n\n```cpp\nstd::sort(v.begin(), v.end());\n```");
    a.promptTokens = 12;
    a.completionTokens = 20;
    a.cachedTokens = 8;
    a.tokensPerSecond = 31.5;
    a.draftTokens = 57;  // speculative decoding verified drafts for this reply
    a.acceptedDraftTokens = 42;
    MessageRecord cut;
    cut.role = QStringLiteral("assistant");
    cut.content = QStringLiteral("half");
    cut.state = MessageState::Interrupted;
    d.messages = {u, a, cut};
    ToolCallRecord t;
    t.callId = QStringLiteral("c9");
    t.name = QStringLiteral("run_code");
    t.arguments = QStringLiteral("{\"lang\":\"cpp\"}");
    t.result = QStringLiteral("ok");
    d.toolCalls = {{}, {t}, {}};
    return d;
}
} // namespace

class ConversationExportTest : public QObject {
    Q_OBJECT
private slots:
    void markdownHasEveryTurn() {
        const QString md = exportMarkdown(sample());
        QVERIFY(md.startsWith(QStringLiteral("# Sorting in C++\n")));
        QVERIFY(md.contains(QStringLiteral("## System\n\nYou are terse.")));
        QVERIFY(md.contains(QStringLiteral("## User\n\nHow do I sort?")));
        QVERIFY(md.contains(QStringLiteral("```cpp\nstd::sort(v.begin(), v.end());\n```")));
        QVERIFY(md.contains(QStringLiteral("_(interrupted)_")));
        QVERIFY(md.contains(QStringLiteral("**Tool call** `run_code`")));
    }

    void jsonRoundTripThroughTheDatabase() {
        QTemporaryDir dir;
        Storage s(dir.path());
        QVERIFY(s.open());
        const ConversationDocument original = sample();
        const QByteArray json = exportJson(original);
        QCOMPARE(QJsonDocument::fromJson(json).object().value("format").toString(), QStringLiteral("weir.conversation"));

        ConversationDocument read;
        QString error;
        QVERIFY2(importJson(json, &read, &error), qPrintable(error));
        const qint64 id = s.importConversation(read.conversation, read.messages, read.toolCalls);
        QVERIFY(id > 0);

        const auto c = s.conversation(id);
        QCOMPARE(c->title, original.conversation.title);
        QCOMPARE(c->settings.systemPrompt, original.conversation.settings.systemPrompt);
        QCOMPARE(c->settings.temperature, 0.2);
        QCOMPARE(c->settings.topK, 20);
        QCOMPARE(c->settings.seed, 77);
        QCOMPARE(c->settings.engine, QStringLiteral("gpu-box"));  // the remote engine it was written with
        const auto messages = s.messages(id);
        QCOMPARE(messages.size(), 3);
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(messages[i].role, original.messages[i].role);
            QCOMPARE(messages[i].content, original.messages[i].content);
            QCOMPARE(messages[i].state, original.messages[i].state);
            QCOMPARE(messages[i].position, i);
        }
        QCOMPARE(messages[1].cachedTokens, 8);
        QCOMPARE(messages[1].tokensPerSecond, 31.5);
        QCOMPARE(messages[1].draftTokens, 57);
        QCOMPARE(messages[1].acceptedDraftTokens, 42);
        QCOMPARE(messages[2].draftTokens, 0);  // none verified: none written, none read
        QVERIFY(!QJsonDocument::fromJson(json).object().value("messages").toArray()[2].toObject()
                     .value("usage").toObject().contains("draft_tokens"));
        const auto calls = s.toolCalls(messages[1].id);
        QCOMPARE(calls.size(), 1);
        QCOMPARE(calls[0].name, QStringLiteral("run_code"));
        QCOMPARE(calls[0].result, QStringLiteral("ok"));

        // Export again from the database: the same document.
        ConversationDocument again;
        again.conversation = *c;
        again.messages = messages;
        for (const auto& m : messages) again.toolCalls.append(s.toolCalls(m.id));
        ConversationDocument reread;
        QVERIFY(importJson(exportJson(again), &reread, &error));
        QCOMPARE(reread.messages.size(), 3);
        QCOMPARE(reread.messages[1].content, original.messages[1].content);
        QCOMPARE(reread.messages[1].draftTokens, 57);
        QCOMPARE(reread.messages[1].acceptedDraftTokens, 42);
    }

    void badInputIsRefusedClearly_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("not json") << QByteArray("{oops") << QStringLiteral("not valid JSON");
        QTest::newRow("array") << QByteArray("[]") << QStringLiteral("JSON object");
        QTest::newRow("wrong format") << QByteArray(R"({"format":"other"})") << QStringLiteral("not a Weir conversation");
        QTest::newRow("newer version") << QByteArray(R"({"format":"weir.conversation","version":9,"messages":[]})")
                                       << QStringLiteral("newer");
        QTest::newRow("no messages") << QByteArray(R"({"format":"weir.conversation","version":1})")
                                     << QStringLiteral("\"messages\" must be an array");
        QTest::newRow("bad role") << QByteArray(R"({"format":"weir.conversation","version":1,"messages":[{"role":"robot","content":"x"}]})")
                                  << QStringLiteral("message 1");
        QTest::newRow("no content") << QByteArray(R"({"format":"weir.conversation","version":1,"messages":[{"role":"user"}]})")
                                    << QStringLiteral("\"content\"");
        QTest::newRow("parent after") << QByteArray(R"({"format":"weir.conversation","version":2,"messages":[{"role":"user","content":"a","parent":1},{"role":"assistant","content":"b","parent":0}]})")
                                      << QStringLiteral("message 1 has a \"parent\"");
        QTest::newRow("parent not a number") << QByteArray(R"({"format":"weir.conversation","version":2,"messages":[{"role":"user","content":"a","parent":null},{"role":"assistant","content":"b","parent":"zero"}]})")
                                             << QStringLiteral("message 2 has a \"parent\"");
        QTest::newRow("more kept than drafted") << QByteArray(R"({"format":"weir.conversation","version":2,"messages":[{"role":"assistant","content":"x","usage":{"draft_tokens":3,"accepted_draft_tokens":5}}]})")
                                                << QStringLiteral("message 1: \"accepted_draft_tokens\" (5)");
        QTest::newRow("negative drafts") << QByteArray(R"({"format":"weir.conversation","version":2,"messages":[{"role":"assistant","content":"x","usage":{"draft_tokens":-2}}]})")
                                         << QStringLiteral("\"draft_tokens\" (-2)");
        QTest::newRow("nameless tool") << QByteArray(R"({"format":"weir.conversation","version":1,"messages":[{"role":"assistant","content":"","tool_calls":[{}]}]})")
                                       << QStringLiteral("tool call");
    }
    void badInputIsRefusedClearly() {
        QFETCH(QByteArray, json);
        QFETCH(QString, mentions);
        ConversationDocument doc;
        QString error;
        QVERIFY(!importJson(json, &doc, &error));
        QVERIFY2(error.contains(mentions), qPrintable(error));
    }

    void versionOneFilesAreOneBranchAndVersionsRoundTrip() {
        // A version 1 file (no "parent"): each message follows the one before it.
        ConversationDocument old;
        QString error;
        QVERIFY(importJson(R"({"format":"weir.conversation","version":1,"messages":[{"role":"user","content":"q"},)"
                           R"({"role":"assistant","content":"a"},{"role":"user","content":"q2"}]})",
                           &old, &error));
        QCOMPARE(old.parentIndex, (QList<int>{-1, 0, 1}));

        // Two versions of the reply; the first is shown and has a later turn.
        QTemporaryDir dir;
        Storage s(dir.path());
        QVERIFY(s.open());
        ConversationDocument doc;
        doc.conversation.title = QStringLiteral("Branches");
        doc.conversation.settings.contextPolicy = QStringLiteral("rollingWindow");
        for (const char* text : {"q", "a1", "a2", "q2"}) {
            MessageRecord m;
            m.role = QString::fromLatin1(text).startsWith(u'q') ? QStringLiteral("user") : QStringLiteral("assistant");
            m.content = QString::fromLatin1(text);
            doc.messages.append(m);
        }
        doc.messages[1].finishReason = QStringLiteral("length");
        doc.messages[2].active = false;
        doc.parentIndex = {-1, 0, 0, 1};
        const qint64 id = s.importConversation(doc.conversation, doc.messages, {}, doc.parentIndex);
        QVERIFY(id > 0);
        auto branch = s.messages(id);
        QCOMPARE(branch.size(), 3);
        QCOMPARE(branch[1].content, QStringLiteral("a1"));
        QCOMPARE(branch[1].versionCount, 2);
        QCOMPARE(branch[1].finishReason, QStringLiteral("length"));

        ConversationDocument exported;
        exported.conversation = *s.conversation(id);
        exported.messages = s.allMessages(id);
        ConversationDocument reread;
        QVERIFY2(importJson(exportJson(exported), &reread, &error), qPrintable(error));
        QCOMPARE(reread.parentIndex, doc.parentIndex);
        QCOMPARE(reread.messages[2].active, false);
        QCOMPARE(reread.messages[1].finishReason, QStringLiteral("length"));
        QCOMPARE(reread.conversation.settings.contextPolicy, QStringLiteral("rollingWindow"));
        // Markdown of the visible branch leaves the hidden version out.
        ConversationDocument shown = exported;
        shown.messages = s.messages(id);
        const QString md = exportMarkdown(shown);
        QVERIFY(md.contains(QStringLiteral("a1")) && md.contains(QStringLiteral("q2")));
        QVERIFY(!md.contains(QStringLiteral("a2")));
    }

    void importedStreamingReplyIsInterrupted() {
        ConversationDocument doc;
        QString error;
        QVERIFY(importJson(R"({"format":"weir.conversation","version":1,"messages":[{"role":"assistant","content":"x","state":"streaming"}]})",
                           &doc, &error));
        QTemporaryDir dir;
        Storage s(dir.path());
        QVERIFY(s.open());
        const qint64 id = s.importConversation(doc.conversation, doc.messages, doc.toolCalls);
        QVERIFY(id > 0);
        const auto messages = s.messages(id);
        QCOMPARE(messages.size(), 1);
        QCOMPARE(messages[0].state, MessageState::Interrupted);
    }
};

QTEST_GUILESS_MAIN(ConversationExportTest)
#include "conversation_export_test.moc"
