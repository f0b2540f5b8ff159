// A conversation on a remote engine, against the fake OpenAI server: the
// engine choice is stored (and survives a restart); a reply streams from the
// server and is stored with its figures and the remote model's id; the
// request carries the turns and the sampling settings; stop mid-stream ends
// the reply once and closes the connection; a refused key, an unreachable
// server and a removed endpoint end it once, in plain words, with the user's
// message kept; tools go as OpenAI tools and the calls come back to run;
// reasoning shows as a thinking block. A renamed endpoint keeps its
// conversations (also across a restart and an import of an older export); the
// header shows the remote model's context, or says the server does not; a
// key only the keyring holds is read without waiting, once per session, and
// a Stop while it is read ends the reply once. A forced call answered in
// words fails in words, its text kept.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "FakeEngineBackend.h"
#include "chat/ChatController.h"
#include "chat/RemoteChatBody.h"
#include "engine_host/EngineHost.h"
#include "remote/RemoteEnginesController.h"
#include "storage/Storage.h"
#include "tests/remote/closed_port.h"
#include "tests/remote/fake_keyring.h"
#include "tests/remote/fake_openai_server.h"
#include "tools/ToolRegistry.h"

using namespace weir::desktop;
using testing::FakeEngineBackend;
using weir::remote::ApiKeyVault;
using weir::remote::RemoteModel;
using weir::test::FakeKeyring;
using weir::remote::RemoteClientOptions;
using weir::test::FakeOpenAiServer;
using weir::test::SeenRequest;

using weir::test::closedPort;

namespace {

int patienceMs() {
    const int scale = qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE");
    return 30000 * (scale > 1 ? scale : 1);
}

RemoteClientOptions direct() {
    RemoteClientOptions o;
    o.systemProxy = false;
    o.connectTimeoutMs = 5000;
    o.maxRetries = 0;
    return o;
}

QByteArray delta(const QByteArray& text) {
    return "data: " + QJsonDocument(QJsonObject{{"choices", QJsonArray{QJsonObject{{"index", 0},
                                                  {"delta", QJsonObject{{"content", QString::fromUtf8(text)}}}}}}})
                          .toJson(QJsonDocument::Compact) + "\n\n";
}

const QByteArray kStop = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
const QByteArray kUsage = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,"
                          "\"total_tokens\":15,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n";
const QByteArray kDone = "data: [DONE]\n\n";

// The app's parts with no local model loaded: a remote conversation needs none.
// Keys in the file, or in `keyring` (a FakeKeyring the test answers).
struct Fixture {
    explicit Fixture(std::shared_ptr<FakeKeyring::State> keyring = nullptr)
        : keyring(std::move(keyring)), storage(dir.path()), host(FakeEngineBackend::factory({})) {
        QVERIFY(storage.open());
        remote = makeRemote();
        chat = std::make_unique<ChatController>(&storage, &host);
        chat->setRemoteEngines(remote.get());
    }
    std::unique_ptr<RemoteEnginesController> makeRemote() {
        if (keyring) return std::make_unique<RemoteEnginesController>(dir.path(), std::make_unique<FakeKeyring>(keyring), direct());
        return std::make_unique<RemoteEnginesController>(dir.path(), ApiKeyVault::Keyring::Never, direct());
    }
    // The endpoints as the next start reads them (no key in memory; the
    // models listed again, as for remoteConversation).
    void restartRemote() {
        auto fresh = makeRemote();
        if (!baseUrl.isEmpty()) fresh->noteModels(QUrl(baseUrl), {RemoteModel{QStringLiteral("org/remote-7b"), {}, 4096}});
        chat->setRemoteEngines(fresh.get());
        remote = std::move(fresh);
    }
    // A conversation on the endpoint "gpu-box" at `baseUrl`, model "org/remote-7b".
    // `listed`: its models as the settings page's test listed them (so the
    // chat header does not ask the server for them).
    qint64 remoteConversation(const QString& baseUrl, bool listed = true) {
        const QString problem = remote->addEndpoint(QStringLiteral("gpu-box"), baseUrl, QStringLiteral("sk-test"),
                                                    QStringLiteral("org/remote-7b"));
        if (!problem.isEmpty()) qWarning() << problem;
        if (listed) {
            this->baseUrl = baseUrl;
            remote->noteModels(QUrl(baseUrl), {RemoteModel{QStringLiteral("org/remote-7b"), {}, 4096}});
        }
        const qint64 id = chat->newConversation();
        chat->setEngine(id, QStringLiteral("gpu-box"));
        return id;
    }
    std::shared_ptr<FakeKeyring::State> keyring;
    QString baseUrl;  // of the endpoint whose models were listed
    QTemporaryDir dir;
    Storage storage;
    EngineHost host;
    std::unique_ptr<RemoteEnginesController> remote;
    std::unique_ptr<ChatController> chat;
};

QJsonObject bodyOf(const SeenRequest& r) { return QJsonDocument::fromJson(r.body).object(); }

} // namespace

class RemoteConversationTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        for (const char* v : {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) qunsetenv(v);
    }

    void engineChoiceIsStoredAndSurvivesARestart() {
        QTemporaryDir dir;
        qint64 id = 0;
        {
            Storage storage(dir.path());
            QVERIFY(storage.open());
            EngineHost host(FakeEngineBackend::factory({}));
            ChatController chat(&storage, &host);
            id = chat.newConversation();
            QCOMPARE(chat.currentEngine(), QString());  // the local engine by default
            QSignalSpy changed(&chat, &ChatController::currentChanged);
            chat.setEngine(id, QStringLiteral("gpu-box"));
            QVERIFY(changed.count() >= 1);
            QCOMPARE(chat.currentEngine(), QStringLiteral("gpu-box"));
            // Saving other settings keeps the engine.
            chat.setSettingsOf(id, {{QStringLiteral("temperature"), 0.3}});
            QCOMPARE(chat.currentEngine(), QStringLiteral("gpu-box"));
        }
        Storage storage(dir.path());
        QVERIFY(storage.open());
        EngineHost host(FakeEngineBackend::factory({}));
        ChatController chat(&storage, &host);
        chat.select(id);
        QCOMPARE(chat.currentEngine(), QStringLiteral("gpu-box"));
        chat.setEngine(id, QString());
        QCOMPARE(storage.conversation(id)->settings.engine, QString());
    }

    void aReplyStreamsFromTheRemoteEngineAndIsStored() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::streamPieces(s, {delta("Bonjour"), delta(", le"), delta(" monde."), kStop, kUsage, kDone});
        }});
        Fixture f;
        const qint64 id = f.remoteConversation(server.baseUrl());
        f.chat->setSettingsOf(id, {{QStringLiteral("systemPrompt"), QStringLiteral("Be brief.")},
                                   {QStringLiteral("temperature"), 0.25}, {QStringLiteral("maxTokens"), 64},
                                   {QStringLiteral("seed"), 7}});
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Hello")));
        QVERIFY(f.chat->currentGenerating());
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("complete"));

        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].content, QStringLiteral("Hello"));
        QCOMPARE(stored[1].content, QStringLiteral("Bonjour, le monde."));
        QCOMPARE(stored[1].state, MessageState::Complete);
        QCOMPARE(stored[1].model, QStringLiteral("org/remote-7b"));  // the reply header names the remote model
        QCOMPARE(stored[1].promptTokens, 12);
        QCOMPARE(stored[1].completionTokens, 3);
        QCOMPARE(stored[1].cachedTokens, 4);
        QCOMPARE(stored[1].finishReason, QStringLiteral("stop"));
        QVERIFY(stored[1].timeToFirstTokenMs > 0);
        QCOMPARE(f.chat->messages()->get(1).value("content").toString(), QStringLiteral("Bonjour, le monde."));

        QCOMPARE(server.requests().size(), 1);
        const SeenRequest& r = server.requests()[0];
        QCOMPARE(r.path, QByteArray("/v1/chat/completions"));
        QCOMPARE(r.headers.value("authorization"), QByteArray("Bearer sk-test"));
        const QJsonObject body = bodyOf(r);
        QCOMPARE(body["model"].toString(), QStringLiteral("org/remote-7b"));
        QCOMPARE(body["stream"].toBool(), true);
        QCOMPARE(body["temperature"].toDouble(), 0.25);
        QCOMPARE(body["max_tokens"].toInt(), 64);
        QCOMPARE(body["seed"].toInteger(), qint64(7));
        const QJsonArray messages = body["messages"].toArray();
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages[0].toObject()["role"].toString(), QStringLiteral("system"));
        QCOMPARE(messages[0].toObject()["content"].toString(), QStringLiteral("Be brief."));
        QCOMPARE(messages[1].toObject()["role"].toString(), QStringLiteral("user"));
        QCOMPARE(messages[1].toObject()["content"].toString(), QStringLiteral("Hello"));
        QVERIFY(!body.contains("tools"));
    }

    void stopMidStreamEndsOnceAndClosesTheConnection() {
        FakeOpenAiServer server;
        // One piece, then the stream stays open.
        server.script({[](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::streamPieces(s, {delta("Partial")}, nullptr); }});
        Fixture f;
        const qint64 id = f.remoteConversation(server.baseUrl());
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QSignalSpy tokens(f.chat.get(), &ChatController::replyTokens);
        QVERIFY(f.chat->send(QStringLiteral("Write a long story")));
        QTRY_VERIFY_WITH_TIMEOUT(tokens.count() >= 1, patienceMs());
        f.chat->stop();
        QCOMPARE(ended.count(), 1);  // at once, not when the server notices
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("cancelled"));
        QVERIFY(!f.chat->currentGenerating());
        QTRY_COMPARE_WITH_TIMEOUT(server.disconnects(), 1, patienceMs());
        f.chat->stop();  // nothing left to stop
        QCOMPARE(ended.count(), 1);
        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[1].content, QStringLiteral("Partial"));
        QCOMPARE(stored[1].state, MessageState::Cancelled);
    }

    void aRefusedKeyFailsOnceInPlainWords() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket* s, const SeenRequest&) {
                           FakeOpenAiServer::respond(s, 401, "Unauthorized", R"({"error":{"message":"Invalid API key"}})");
                       },
                       [](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::streamPieces(s, {delta("Now it works."), kStop, kDone}); }});
        Fixture f;
        const qint64 id = f.remoteConversation(server.baseUrl());
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Are you there?")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("failed"));
        QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].content, QStringLiteral("Are you there?"));  // what was typed is kept
        QCOMPARE(stored[1].state, MessageState::Failed);
        QVERIFY2(stored[1].error.contains(QStringLiteral("refused the API key")), qPrintable(stored[1].error));
        QVERIFY2(stored[1].error.contains(QStringLiteral("Invalid API key")), qPrintable(stored[1].error));
        QCOMPARE(f.chat->messages()->get(1).value("error").toString(), stored[1].error);

        // Retried as a local failed reply is: a new version, which the server now answers.
        QVERIFY(f.chat->regenerate());
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, patienceMs());
        QCOMPARE(ended.at(1).at(2).toString(), QStringLiteral("complete"));
        stored = f.storage.messages(id);
        QCOMPARE(stored.last().content, QStringLiteral("Now it works."));
        // The failed reply was not sent back to the model.
        QCOMPARE(bodyOf(server.requests().last())["messages"].toArray().size(), 1);
    }

    void anUnreachableServerFailsOnce() {
        Fixture f;
        const qint64 id = f.remoteConversation(QStringLiteral("http://127.0.0.1:%1/v1").arg(closedPort()));
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Hello?")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QTest::qWait(50);
        QCOMPARE(ended.count(), 1);
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("failed"));
        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].content, QStringLiteral("Hello?"));
        QVERIFY2(stored[1].error.startsWith(QStringLiteral("Cannot reach 127.0.0.1:")), qPrintable(stored[1].error));
        QVERIFY(!f.chat->currentGenerating());
    }

    void aRemovedEndpointFailsAtOnce() {
        FakeOpenAiServer server;
        Fixture f;
        const qint64 id = f.remoteConversation(server.baseUrl());
        QCOMPARE(f.remote->removeEndpoint(QStringLiteral("gpu-box")), QString());
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Still there?")));
        QCOMPARE(ended.count(), 0);  // told after the reply is on screen, on the next turn
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 1000);
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("failed"));
        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].content, QStringLiteral("Still there?"));
        QCOMPARE(stored[1].error, QStringLiteral("The remote engine \u2018gpu-box\u2019 no longer exists \u2014 "
                                                 "choose another engine for this conversation"));
        QCOMPARE(stored[1].model, QStringLiteral("gpu-box"));
        QVERIFY(server.requests().isEmpty());
        // Stopping it before the next turn ends it once, as cancelled.
        QVERIFY(f.chat->send(QStringLiteral("Again")));
        f.chat->stop();
        QCOMPARE(ended.count(), 2);
        QCOMPARE(ended.at(1).at(2).toString(), QStringLiteral("cancelled"));
        QTest::qWait(20);
        QCOMPARE(ended.count(), 2);
    }

    void toolsGoAsOpenAiToolsAndTheCallsRun() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket* s, const SeenRequest&) {
                           FakeOpenAiServer::streamPieces(s, {
                               "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"srv_1\",\"type\":\"function\","
                               "\"function\":{\"name\":\"calculator\",\"arguments\":\"\"}}]}}]}\n\n",
                               "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"expression\\\":\"}}]}}]}\n\n",
                               "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"(2+3)*4\\\"}\"}}]}}]}\n\n",
                               "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n", kDone});
                       },
                       [](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::streamPieces(s, {delta("The answer is 20."), kStop, kDone}); }});
        Fixture f;
        ToolRegistry tools;
        f.chat->setToolRegistry(&tools);
        const qint64 id = f.remoteConversation(server.baseUrl());
        f.chat->setToolsEnabled(id, true);
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        QVERIFY(f.chat->send(QStringLiteral("What is (2+3)*4?")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("answered"));

        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 3);
        const QList<ToolCallRecord> calls = f.storage.toolCalls(stored[1].id);
        QCOMPARE(calls.size(), 1);
        QCOMPARE(calls[0].name, QStringLiteral("calculator"));
        QCOMPARE(calls[0].result, QStringLiteral("20"));
        QCOMPARE(stored[2].content, QStringLiteral("The answer is 20."));

        QCOMPARE(server.requests().size(), 2);
        const QJsonArray offered = bodyOf(server.requests()[0])["tools"].toArray();
        bool calculator = false;
        for (const QJsonValue& t : offered) calculator |= t["function"]["name"].toString() == u"calculator";
        QVERIFY(calculator);
        const QJsonArray second = bodyOf(server.requests()[1])["messages"].toArray();
        QCOMPARE(second.size(), 3);
        const QJsonObject call = second[1].toObject()["tool_calls"].toArray()[0].toObject();
        QCOMPARE(call["function"].toObject()["name"].toString(), QStringLiteral("calculator"));
        QCOMPARE(second[2].toObject()["role"].toString(), QStringLiteral("tool"));
        QCOMPARE(second[2].toObject()["tool_call_id"], call["id"]);
        QCOMPARE(second[2].toObject()["content"].toString(), QStringLiteral("20"));
    }

    // A forced call the server answers in words (llama.cpp's server ignores
    // tool_choice "required" for some models): the reply fails once, in
    // words that say so, and keeps its text and the server's counts; the
    // message typed stays. With any tool forced and nothing written, the
    // message says that instead.
    void aForcedCallAnsweredInWordsFails() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket* s, const SeenRequest&) {
                           FakeOpenAiServer::streamPieces(s, {delta("I think it is 20."), kStop, kUsage, kDone});
                       },
                       [](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::streamPieces(s, {kStop, kDone}); }});
        Fixture f;
        ToolRegistry tools;
        f.chat->setToolRegistry(&tools);
        const qint64 id = f.remoteConversation(server.baseUrl());
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QSignalSpy finished(f.chat.get(), &ChatController::agentFinished);
        QVERIFY(f.chat->sendForcing(id, QStringLiteral("What is (2+3)*4?"), QStringLiteral("calculator")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        QCOMPARE(finished.at(0).at(1).toString(), QStringLiteral("failed"));
        QCOMPARE(ended.count(), 1);
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("failed"));
        const QJsonObject body = bodyOf(server.requests().at(0));
        QCOMPARE(body["tool_choice"].toString(), QStringLiteral("required"));
        QCOMPARE(body["tools"].toArray().size(), 1);

        QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].content, QStringLiteral("What is (2+3)*4?"));
        QCOMPARE(stored[1].state, MessageState::Failed);
        QCOMPARE(stored[1].content, QStringLiteral("I think it is 20."));
        QCOMPARE(stored[1].error, QStringLiteral("The remote engine \u2018gpu-box\u2019 answered without calling \u201ccalculator\u201d, "
                                                 "which this reply was asked to call (its text is kept below). Its server may "
                                                 "not support forced tool calls for the model org/remote-7b."));
        QCOMPARE(stored[1].promptTokens, 12);
        QCOMPARE(stored[1].completionTokens, 3);
        QVERIFY(f.storage.toolCalls(stored[1].id).isEmpty());
        QCOMPARE(f.chat->messages()->get(1).value("error").toString(), stored[1].error);
        QCOMPARE(f.chat->messages()->get(1).value("content").toString(), stored[1].content);

        QVERIFY(f.chat->sendForcing(id, QStringLiteral("Use any tool."), QStringLiteral("required")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, patienceMs());
        QCOMPARE(finished.at(1).at(1).toString(), QStringLiteral("failed"));
        QCOMPARE(ended.count(), 2);
        QVERIFY(bodyOf(server.requests().at(1))["tools"].toArray().size() > 1);
        stored = f.storage.messages(id);
        QCOMPARE(stored.last().content, QString());
        QCOMPARE(stored.last().error, QStringLiteral("The remote engine \u2018gpu-box\u2019 answered without calling a tool, which "
                                                     "this reply was asked to do. Its server may not support forced tool calls "
                                                     "for the model org/remote-7b."));
        QTest::qWait(50);
        QCOMPARE(ended.count(), 2);
    }

    // The body for a forced call and for Continue (pure).
    void reasoningShowsAsAThinkingBlock() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::streamPieces(s, {"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Two and \"}}]}\n\n",
                                              "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"two.\"}}]}\n\n",
                                              delta("4"), kStop, kDone});
        }});
        Fixture f;
        const qint64 id = f.remoteConversation(server.baseUrl());
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("2+2?")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(f.storage.messages(id)[1].content, QStringLiteral("<think>\nTwo and two.\n</think>\n\n4"));
    }

    void anEndpointWithNoModelFailsAtOnce() {
        FakeOpenAiServer server;
        Fixture f;
        QCOMPARE(f.remote->addEndpoint(QStringLiteral("bare"), server.baseUrl(), QString()), QString());
        const qint64 id = f.chat->newConversation();
        f.chat->setEngine(id, QStringLiteral("bare"));
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Hi")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 1000);
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("failed"));
        QVERIFY2(f.storage.messages(id)[1].error.contains(QStringLiteral("has no model chosen")),
                 qPrintable(f.storage.messages(id)[1].error));
        QVERIFY(server.requests().isEmpty());
    }

    // Renamed in the settings: the conversations on it follow, and replies go on.
    void aRenamedEndpointKeepsItsConversations() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::streamPieces(s, {delta("Still here."), kStop, kDone}); }});
        Fixture f;
        const qint64 id = f.remoteConversation(server.baseUrl());
        const qint64 second = f.chat->newConversation();
        f.chat->setEngine(second, QStringLiteral("gpu-box"));
        const qint64 local = f.chat->newConversation();
        f.chat->select(id);
        const QString exported = f.dir.filePath(QStringLiteral("before-rename.json"));
        QVERIFY(f.chat->exportConversation(id, QUrl::fromLocalFile(exported), QStringLiteral("json")));

        QCOMPARE(f.remote->editEndpoint(QStringLiteral("gpu-box"), QStringLiteral("Lab"), server.baseUrl(),
                                        QStringLiteral("org/remote-7b"), false, QString()), QString());
        QCOMPARE(f.storage.conversation(id)->settings.engine, QStringLiteral("Lab"));
        QCOMPARE(f.storage.conversation(second)->settings.engine, QStringLiteral("Lab"));
        QCOMPARE(f.storage.conversation(local)->settings.engine, QString());
        QCOMPARE(f.chat->currentEngine(), QStringLiteral("Lab"));  // the chooser shows the new name

        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Are you there?")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("complete"));
        QCOMPARE(server.requests().last().headers.value("authorization"), QByteArray("Bearer sk-test"));  // the key followed

        // An export made before the rename names the old engine: imported, it uses the renamed one.
        const qint64 imported = f.chat->importConversation(QUrl::fromLocalFile(exported));
        QVERIFY(imported > 0);
        QCOMPARE(f.storage.conversation(imported)->settings.engine, QStringLiteral("Lab"));
    }

    // A rename the database did not take (the app was not running it, or it
    // was refused) is caught up at the next start.
    void aRenameIsCaughtUpAtTheNextStart() {
        FakeOpenAiServer server;
        Fixture f;
        const qint64 id = f.remoteConversation(server.baseUrl());
        f.chat->setRemoteEngines(nullptr);  // the rename happens where the chat does not hear it
        QCOMPARE(f.remote->editEndpoint(QStringLiteral("gpu-box"), QStringLiteral("Lab"), server.baseUrl(),
                                        QStringLiteral("org/remote-7b"), false, QString()), QString());
        QCOMPARE(f.storage.conversation(id)->settings.engine, QStringLiteral("gpu-box"));
        f.restartRemote();
        QCOMPARE(f.storage.conversation(id)->settings.engine, QStringLiteral("Lab"));
        QCOMPARE(f.chat->currentEngine(), QStringLiteral("Lab"));
    }

    // Renamed, then removed: the conversation names it as removed and fails in words.
    void aRenamedThenRemovedEndpointFailsInWords() {
        FakeOpenAiServer server;
        Fixture f;
        const qint64 id = f.remoteConversation(server.baseUrl());
        QCOMPARE(f.remote->editEndpoint(QStringLiteral("gpu-box"), QStringLiteral("Lab"), server.baseUrl(),
                                        QStringLiteral("org/remote-7b"), false, QString()), QString());
        QCOMPARE(f.remote->removeEndpoint(QStringLiteral("Lab")), QString());
        QCOMPARE(f.chat->currentEngine(), QStringLiteral("Lab"));  // the chooser: "Lab (removed)"
        QVERIFY(!f.remote->names().contains(QStringLiteral("Lab")));
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Hello?")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 1000);
        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored[0].content, QStringLiteral("Hello?"));
        QCOMPARE(stored[1].error, QStringLiteral("The remote engine \u2018Lab\u2019 no longer exists \u2014 "
                                                 "choose another engine for this conversation"));
        QVERIFY(server.requests().isEmpty());
    }

    // The header: the tokens the last reply used against the context the server lists.
    void theHeaderShowsTheRemoteContext() {
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        FakeOpenAiServer server;
        server.route("/v1/models", [](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::respond(s, 200, "OK", R"({"object":"list","data":[{"id":"org/remote-7b","max_model_len":32768}]})");
        });
        server.script({[](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::streamPieces(s, {delta("Hi."), kStop, kUsage, kDone}); }});
        Fixture f;
        f.remoteConversation(server.baseUrl(), false);
        QTRY_COMPARE_WITH_TIMEOUT(f.chat->contextTokens(), 32768, patienceMs());
        QCOMPARE(f.chat->contextNote(), QString());
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Hello")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(f.chat->contextUsed(), 15);  // the reply's usage: 12 prompt + 3 completion
        QCOMPARE(f.chat->contextText(), QStringLiteral("15 / 32,768 tokens"));
        QLocale::setDefault(QLocale::c());
    }

    // Opening a remote conversation after a local one: the header's binding is
    // told once the opened conversation's engine is known (it was told only
    // while the previous one's settings were still current, and kept them).
    void theHeaderFollowsTheOpenedConversationsEngine() {
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        FakeOpenAiServer server;
        server.route("/v1/models", [](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::respond(s, 200, "OK", R"({"object":"list","data":[{"id":"org/remote-7b","max_model_len":32768}]})");
        });
        Fixture f;
        const qint64 remote = f.remoteConversation(server.baseUrl(), false);
        QTRY_COMPARE_WITH_TIMEOUT(f.chat->contextTokens(), 32768, patienceMs());
        const qint64 local = f.chat->newConversation();
        QCOMPARE(f.chat->currentId(), local);
        // What a QML binding on contextText shows: its value at the last notification.
        QString shown;
        connect(f.chat.get(), &ChatController::contextUsageChanged, this, [&] { shown = f.chat->contextText(); });
        f.chat->select(remote);
        QCOMPARE(f.chat->contextText(), QStringLiteral("0 / 32,768 tokens"));
        QCOMPARE(shown, f.chat->contextText());
        f.chat->select(local);
        QCOMPARE(shown, f.chat->contextText());
        QLocale::setDefault(QLocale::c());
    }

    // A server that lists no context: the header says so instead of hiding the line.
    void theHeaderSaysWhenTheServerDoesNotReportItsContext() {
        FakeOpenAiServer server;
        server.route("/v1/models", [](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::respond(s, 200, "OK", R"({"object":"list","data":[{"id":"org/remote-7b","owned_by":"me"}]})");
        });
        server.script({[](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::streamPieces(s, {delta("Hi."), kStop, kUsage, kDone}); }});
        Fixture f;
        f.remoteConversation(server.baseUrl(), false);
        QCOMPARE(f.chat->contextNote(), QStringLiteral("asking gpu-box for its context\u2026"));
        QTRY_COMPARE_WITH_TIMEOUT(f.chat->contextNote(), QStringLiteral("context not reported by gpu-box"), patienceMs());
        QCOMPARE(f.chat->contextTokens(), 0);
        QCOMPARE(f.chat->contextText(), QStringLiteral("context not reported by gpu-box"));
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Hello")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(f.chat->contextText(), QStringLiteral("15 tokens \u00b7 context not reported by gpu-box"));
    }

    // A key only the keyring holds: the first reply starts when the keyring
    // answers; later ones do not wait for it at all.
    void aKeyInTheKeyringIsReadOnceWithoutWaiting() {
        FakeOpenAiServer server;
        server.script({[](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::streamPieces(s, {delta("One."), kStop, kDone}); },
                       [](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::streamPieces(s, {delta("Two."), kStop, kDone}); }});
        auto keyring = std::make_shared<FakeKeyring::State>();
        Fixture f(keyring);
        keyring->answerAll();  // a keyring answers
        const qint64 id = f.remoteConversation(server.baseUrl());
        keyring->answerAll();  // the key is written there
        QCOMPARE(keyring->stored.value(QStringLiteral("gpu-box")), QStringLiteral("sk-test"));
        f.restartRemote();  // a new session: the key is not in memory
        keyring->answerAll();
        const int readsBefore = keyring->reads;

        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("First")));
        QVERIFY(f.chat->currentGenerating());
        QCOMPARE(keyring->reads, readsBefore + 1);  // asked, not waited for
        QCOMPARE(keyring->pending.size(), size_t(1));
        QVERIFY(keyring->answerNext());
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("complete"));
        QCOMPARE(server.requests().at(0).headers.value("authorization"), QByteArray("Bearer sk-test"));

        // The key is in memory: this reply reaches the server though the keyring answers nothing now.
        QVERIFY(f.chat->send(QStringLiteral("Second")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 2, patienceMs());
        QCOMPARE(ended.at(1).at(2).toString(), QStringLiteral("complete"));
        QCOMPARE(keyring->reads, readsBefore + 1);
        QVERIFY(keyring->pending.empty());
        QCOMPARE(server.requests().size(), 2);
        QCOMPARE(server.requests().at(1).headers.value("authorization"), QByteArray("Bearer sk-test"));
        QCOMPARE(f.storage.messages(id).last().content, QStringLiteral("Two."));
    }

    // Stop while the key is read: one terminal event, nothing sent, the late key starts nothing.
    void stopWhileTheKeyIsReadEndsOnce() {
        FakeOpenAiServer server;
        auto keyring = std::make_shared<FakeKeyring::State>();
        Fixture f(keyring);
        keyring->answerAll();
        const qint64 id = f.remoteConversation(server.baseUrl());
        keyring->answerAll();
        f.restartRemote();
        keyring->answerAll();
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Never mind")));
        QCOMPARE(keyring->pending.size(), size_t(1));
        f.chat->stop();
        QCOMPARE(ended.count(), 1);
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("cancelled"));
        QVERIFY(!f.chat->currentGenerating());
        QVERIFY(keyring->answerNext());  // the key arrives after all
        QCoreApplication::processEvents();
        QCOMPARE(ended.count(), 1);
        QVERIFY(server.requests().isEmpty());
        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].content, QStringLiteral("Never mind"));
        QCOMPARE(stored[1].state, MessageState::Cancelled);
    }

    // A keyring that does not answer: the reply fails in words, the message stays.
    void aSilentKeyringFailsTheReplyInWords() {
        FakeOpenAiServer server;
        auto keyring = std::make_shared<FakeKeyring::State>();
        Fixture f(keyring);
        keyring->answerAll();
        const qint64 id = f.remoteConversation(server.baseUrl());
        keyring->answerAll();
        f.restartRemote();
        keyring->answerAll();
        f.remote->setKeyringWaitMs(20);
        QSignalSpy ended(f.chat.get(), &ChatController::replyEnded);
        QVERIFY(f.chat->send(QStringLiteral("Hello?")));
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, patienceMs());
        QCOMPARE(ended.at(0).at(2).toString(), QStringLiteral("failed"));
        const QList<MessageRecord> stored = f.storage.messages(id);
        QCOMPARE(stored[0].content, QStringLiteral("Hello?"));
        QCOMPARE(stored[1].error, QStringLiteral("Could not read the API key of the remote engine \u2018gpu-box\u2019 from the system "
                                                 "keyring: it did not answer within 20 ms \u2014 try again, or enter the key again in "
                                                 "Settings \u203a Remote engines"));
        QVERIFY(server.requests().isEmpty());
    }

    void bodyForcesACallAndContinues() {
        ReplyPlan agent;
        agent.agent = true;
        agent.chat.messagesJson = R"([{"role":"user","content":"hi"}])";
        agent.chat.toolsJson = R"([{"type":"function","function":{"name":"current_datetime","parameters":{}}},
                                   {"type":"function","function":{"name":"calculator","parameters":{}}}])";
        agent.chat.toolChoice.mode = weir::ToolChoice::Mode::Function;
        agent.chat.toolChoice.function = "calculator";
        ConversationSettings settings;  // seed -1: random, not sent
        QJsonObject body = remoteChatBody(agent, settings);
        // "required" with the forced tool alone: llama.cpp's server ignores a named tool_choice.
        QCOMPARE(body["tool_choice"].toString(), QStringLiteral("required"));
        QCOMPARE(body["tools"].toArray().size(), 1);
        QCOMPARE(body["tools"][0]["function"]["name"].toString(), QStringLiteral("calculator"));
        QVERIFY(!body.contains("seed"));

        ReplyPlan cont;
        cont.turns = {{"user", "Tell me"}, {"assistant", "Once upon"}};
        cont.prompt.continueLast = true;
        body = remoteChatBody(cont, settings);
        QCOMPARE(body["messages"].toArray().last().toObject()["content"].toString(), QStringLiteral("Once upon"));
        QCOMPARE(body["continue_final_message"].toBool(), true);
        QCOMPARE(body["add_generation_prompt"].toBool(), false);
    }
};

QTEST_MAIN(RemoteConversationTest)
#include "remote_conversation_test.moc"
