// The remote engines' settings controller against a fake OpenAI server:
// add an endpoint, test the connection (GET /v1/models, asynchronous) and
// choose a listed model, edit, remove; a bad address, an unreachable server
// and a refused key come back in plain words and change nothing; the line
// that says where keys are kept; what the chat side gets from target(),
// without waiting for a keyring; a rename announced, the former name still
// finding the endpoint; the context length a server lists, asked once.
#include <QDeadlineTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "remote/RemoteEnginesController.h"
#include "tests/remote/closed_port.h"
#include "tests/remote/fake_keyring.h"
#include "tests/remote/fake_openai_server.h"

using namespace weir::desktop;
using weir::remote::ApiKeyVault;
using weir::remote::KeyRead;
using weir::test::FakeKeyring;
using weir::remote::RemoteClientOptions;
using weir::test::FakeOpenAiServer;
using weir::test::SeenRequest;

using weir::test::closedPort;

namespace {

const QByteArray kModels =
    R"({"object":"list","data":[)"
    R"({"id":"Qwen/Qwen3-8B","object":"model","owned_by":"vllm","max_model_len":32768},)"
    R"({"id":"qwen3-8b-lora","object":"model","owned_by":"vllm"}]})";

RemoteClientOptions direct() {
    RemoteClientOptions o;
    o.systemProxy = false;
    o.connectTimeoutMs = 5000;
    o.maxRetries = 0;
    return o;
}

// The controller with keys in a file (no keyring in tests).
std::unique_ptr<RemoteEnginesController> controller(const QString& folder) {
    return std::make_unique<RemoteEnginesController>(folder, ApiKeyVault::Keyring::Never, direct());
}

// Waits for the running test to end; its state.
QString finishTest(RemoteEnginesController& c) {
    QDeadlineTimer deadline(15000);
    while (c.testState() == QLatin1String("testing") && !deadline.hasExpired()) QTest::qWait(5);
    return c.testState();
}

} // namespace

class RemoteEnginesControllerTest : public QObject {
    Q_OBJECT
private slots:
    void addTestChooseAndRemove() {
        QTemporaryDir dir;
        FakeOpenAiServer server;
        server.route("/v1/models", [](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::respond(s, 200, "OK", kModels); });
        auto c = controller(dir.path());
        QSignalSpy listChanged(c.get(), &RemoteEnginesController::endpointsChanged);

        QCOMPARE(c->addEndpoint(QStringLiteral("GPU box"), server.baseUrl(), QStringLiteral("sk-test")), QString());
        QCOMPARE(listChanged.count(), 1);
        QCOMPARE(c->names(), QStringList{QStringLiteral("GPU box")});
        QCOMPARE(c->endpoints().first().toMap().value(QStringLiteral("model")).toString(), QString());

        // The test of a saved endpoint uses its saved key when none is typed,
        // and returns at once: the answer comes later.
        c->testConnection(server.baseUrl(), QString(), QStringLiteral("GPU box"));
        QCOMPARE(c->testState(), QStringLiteral("testing"));
        QCOMPARE(finishTest(*c), QStringLiteral("ok"));
        QCOMPARE(server.requests().size(), 1);
        QCOMPARE(server.requests().first().headers.value("authorization"), QByteArray("Bearer sk-test"));
        const QVariantList models = c->testModels();
        QCOMPARE(models.size(), 2);
        QCOMPARE(models[0].toMap().value(QStringLiteral("id")).toString(), QStringLiteral("Qwen/Qwen3-8B"));
        QCOMPARE(models[0].toMap().value(QStringLiteral("contextLength")).toLongLong(), 32768);
        QCOMPARE(models[1].toMap().value(QStringLiteral("contextLength")).toLongLong(), 0);
        QVERIFY2(c->testMessage().contains(QLatin1String("2 models")), qPrintable(c->testMessage()));

        QCOMPARE(c->chooseModel(QStringLiteral("GPU box"), QStringLiteral("Qwen/Qwen3-8B")), QString());
        const std::optional<RemoteTarget> t = c->target(QStringLiteral("GPU box"));
        QVERIFY(t);
        QCOMPARE(t->endpoint.baseUrl, QUrl(server.baseUrl()));
        QCOMPARE(t->endpoint.apiKey, QStringLiteral("sk-test"));
        QCOMPARE(t->model, QStringLiteral("Qwen/Qwen3-8B"));
        QCOMPARE(t->contextLength.value_or(-1), 32768);

        // Saved: a new controller on the same folder reads it back.
        {
            auto again = controller(dir.path());
            QCOMPARE(again->loadProblem(), QString());
            const std::optional<RemoteTarget> back = again->target(QStringLiteral("GPU box"));
            QVERIFY(back);
            QCOMPARE(back->model, QStringLiteral("Qwen/Qwen3-8B"));
            QCOMPARE(back->endpoint.apiKey, QStringLiteral("sk-test"));
        }

        QCOMPARE(c->removeEndpoint(QStringLiteral("GPU box")), QString());
        QVERIFY(c->names().isEmpty());
        QVERIFY(!c->target(QStringLiteral("GPU box")));
        QVERIFY(c->removeEndpoint(QStringLiteral("GPU box")).contains(QLatin1String("no endpoint named")));
    }

    // Rename, new address, the key kept unless replaced; a duplicate name is refused.
    void editKeepsOrReplacesTheKey() {
        QTemporaryDir dir;
        auto c = controller(dir.path());
        QCOMPARE(c->addEndpoint(QStringLiteral("a"), QStringLiteral("http://host-a:8000/v1"), QStringLiteral("key-a")), QString());
        QCOMPARE(c->addEndpoint(QStringLiteral("b"), QStringLiteral("host-b:8080"), QString()), QString());
        // Typed without a scheme: http:// is meant.
        QCOMPARE(c->endpoint(QStringLiteral("b")).value(QStringLiteral("baseUrl")).toString(), QStringLiteral("http://host-b:8080"));

        QCOMPARE(c->editEndpoint(QStringLiteral("a"), QStringLiteral("renamed"), QStringLiteral("https://host-a/v1"),
                                 QStringLiteral("m1"), false, QString()), QString());
        const std::optional<RemoteTarget> t = c->target(QStringLiteral("renamed"));
        QVERIFY(t);
        QCOMPARE(t->endpoint.apiKey, QStringLiteral("key-a"));
        QCOMPARE(t->endpoint.baseUrl, QUrl(QStringLiteral("https://host-a/v1")));
        QCOMPARE(t->model, QStringLiteral("m1"));

        QCOMPARE(c->editEndpoint(QStringLiteral("renamed"), QStringLiteral("renamed"), QStringLiteral("https://host-a/v1"),
                                 QStringLiteral("m1"), true, QStringLiteral("key-new")), QString());
        QCOMPARE(c->target(QStringLiteral("renamed"))->endpoint.apiKey, QStringLiteral("key-new"));

        const QString dup = c->editEndpoint(QStringLiteral("renamed"), QStringLiteral("b"), QStringLiteral("https://host-a/v1"),
                                            QStringLiteral("m1"), false, QString());
        QCOMPARE(dup, QStringLiteral("There is already an endpoint named “b”."));
        QCOMPARE(c->names(), (QStringList{QStringLiteral("renamed"), QStringLiteral("b")}));
    }

    // A key only the keyring holds: target() does not wait for it, readApiKey
    // answers when the keyring does, and from then on the key is in memory.
    void keysInTheKeyringAreReadWithoutWaiting() {
        QTemporaryDir dir;
        auto keyring = std::make_shared<FakeKeyring::State>();
        {
            RemoteEnginesController c(dir.path(), std::make_unique<FakeKeyring>(keyring), direct());
            QVERIFY2(c.keyStorage().startsWith(QLatin1String("Asking the system keyring")), qPrintable(c.keyStorage()));
            QSignalSpy changed(&c, &RemoteEnginesController::endpointsChanged);
            keyring->answerAll();  // it answers: keys go there
            QCOMPARE(changed.count(), 1);
            QCOMPARE(c.keyStorage(), QStringLiteral("API keys are kept in the system keyring."));
            QCOMPARE(c.addEndpoint(QStringLiteral("GPU box"), QStringLiteral("http://h:1/v1"), QStringLiteral("sk-ring"),
                                   QStringLiteral("m")), QString());
            QVERIFY(c.target(QStringLiteral("GPU box"))->keyKnown);  // written in this session
            keyring->answerAll();
            QCOMPARE(keyring->stored.value(QStringLiteral("GPU box")), QStringLiteral("sk-ring"));
        }
        // The next session knows the key only once it has read it.
        RemoteEnginesController c(dir.path(), std::make_unique<FakeKeyring>(keyring), direct());
        keyring->answerAll();
        std::optional<RemoteTarget> t = c.target(QStringLiteral("GPU box"));
        QVERIFY(t && !t->keyKnown);
        QCOMPARE(t->endpoint.apiKey, QString());
        std::optional<KeyRead> read;
        c.readApiKey(QStringLiteral("GPU box"), &c, [&](const KeyRead& r) { read = r; });
        QVERIFY(!read);
        keyring->answerAll();
        QVERIFY(read && read->ok);
        QCOMPARE(read->key, QStringLiteral("sk-ring"));
        t = c.target(QStringLiteral("GPU box"));
        QVERIFY(t->keyKnown);
        QCOMPARE(t->endpoint.apiKey, QStringLiteral("sk-ring"));
    }

    // Conversations follow a rename (endpointRenamed); the former name still finds the endpoint.
    void aRenameIsAnnouncedAndTheFormerNameResolves() {
        QTemporaryDir dir;
        auto c = controller(dir.path());
        QCOMPARE(c->addEndpoint(QStringLiteral("GPU box"), QStringLiteral("http://h:1/v1"), QStringLiteral("k"), QStringLiteral("m")),
                 QString());
        QSignalSpy renamed(c.get(), &RemoteEnginesController::endpointRenamed);
        QCOMPARE(c->editEndpoint(QStringLiteral("GPU box"), QStringLiteral("Lab"), QStringLiteral("http://h:1/v1"), QStringLiteral("m"),
                                 false, QString()), QString());
        QCOMPARE(renamed.count(), 1);
        QCOMPARE(renamed.at(0).at(0).toString(), QStringLiteral("GPU box"));
        QCOMPARE(renamed.at(0).at(1).toString(), QStringLiteral("Lab"));
        const std::optional<RemoteTarget> t = c->target(QStringLiteral("GPU box"));
        QVERIFY(t);
        QCOMPARE(t->name, QStringLiteral("Lab"));
        QCOMPARE(t->endpoint.apiKey, QStringLiteral("k"));
        QCOMPARE(c->formerNames(), (QList<QPair<QString, QString>>{{QStringLiteral("GPU box"), QStringLiteral("Lab")}}));
        // Other edits are no rename.
        QCOMPARE(c->editEndpoint(QStringLiteral("Lab"), QStringLiteral("Lab"), QStringLiteral("http://h:1/v1"), QStringLiteral("m2"),
                                 false, QString()), QString());
        QCOMPARE(renamed.count(), 1);
    }

    // The chat header's context: the server's listing, asked once per server, with the key.
    void theContextOfTheChosenModelIsAskedForOnce() {
        QTemporaryDir dir;
        FakeOpenAiServer server;
        server.route("/v1/models", [](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::respond(s, 200, "OK", kModels); });
        auto c = controller(dir.path());
        QCOMPARE(c->addEndpoint(QStringLiteral("big"), server.baseUrl(), QStringLiteral("sk-c"), QStringLiteral("Qwen/Qwen3-8B")), QString());
        QCOMPARE(c->addEndpoint(QStringLiteral("lora"), server.baseUrl(), QString(), QStringLiteral("qwen3-8b-lora")), QString());
        QCOMPARE(c->contextOf(QStringLiteral("big")).tokens, std::nullopt);
        QSignalSpy contexts(c.get(), &RemoteEnginesController::contextsChanged);
        c->askContext(QStringLiteral("big"));
        QVERIFY(c->contextOf(QStringLiteral("big")).asking);
        c->askContext(QStringLiteral("lora"));  // the same server: the same listing
        QTRY_VERIFY_WITH_TIMEOUT(!c->contextOf(QStringLiteral("big")).asking, 15000);
        QVERIFY(contexts.count() >= 1);
        QCOMPARE(c->contextOf(QStringLiteral("big")).tokens, std::optional<qint64>(32768));
        QCOMPARE(c->contextOf(QStringLiteral("lora")).tokens, std::nullopt);  // listed without one
        c->askContext(QStringLiteral("big"));
        c->askContext(QStringLiteral("lora"));
        QVERIFY(!c->contextOf(QStringLiteral("lora")).asking);
        QCOMPARE(server.requests().size(), 1);
        QCOMPARE(server.requests().first().headers.value("authorization"), QByteArray("Bearer sk-c"));
    }

    // Refused input changes nothing and says why; the form keeps what was typed.
    void badInputIsRefusedInWords() {
        QTemporaryDir dir;
        auto c = controller(dir.path());
        QSignalSpy listChanged(c.get(), &RemoteEnginesController::endpointsChanged);
        const QString ftp = c->addEndpoint(QStringLiteral("x"), QStringLiteral("ftp://files.example/v1"), QString());
        QCOMPARE(ftp, QStringLiteral("“ftp://files.example/v1” is not an http:// or https:// address with a host "
                                     "(for example http://gpu-box:8000/v1)."));
        QVERIFY(c->addEndpoint(QStringLiteral("x"), QStringLiteral("http://"), QString()).contains(QLatin1String("not an http://")));
        QVERIFY(c->addEndpoint(QStringLiteral("x"), QStringLiteral("   "), QString()).startsWith(QLatin1String("Type the server's address")));
        QCOMPARE(c->addEndpoint(QStringLiteral("  "), QStringLiteral("http://h:1/v1"), QString()), QStringLiteral("An endpoint needs a name."));
        QVERIFY(c->names().isEmpty());
        QCOMPARE(listChanged.count(), 0);

        // A test of a bad address fails at once, without a request.
        c->testConnection(QStringLiteral("ftp://files.example/v1"), QString());
        QCOMPARE(c->testState(), QStringLiteral("failed"));
        QVERIFY(c->testMessage().contains(QLatin1String("not an http://")));
        QVERIFY(c->testModels().isEmpty());
    }

    void unreachableServer() {
        QTemporaryDir dir;
        auto c = controller(dir.path());
        c->testConnection(QStringLiteral("http://127.0.0.1:%1/v1").arg(closedPort()), QString());
        QCOMPARE(finishTest(*c), QStringLiteral("failed"));
        QVERIFY2(c->testMessage().startsWith(QLatin1String("Cannot reach 127.0.0.1:")), qPrintable(c->testMessage()));
        QVERIFY(c->testModels().isEmpty());
    }

    void refusedKey() {
        QTemporaryDir dir;
        FakeOpenAiServer server;
        server.route("/v1/models", [](QTcpSocket* s, const SeenRequest&) {
            FakeOpenAiServer::respond(s, 401, "Unauthorized", R"({"error":{"message":"Invalid API key","type":"invalid_request_error"}})");
        });
        auto c = controller(dir.path());
        c->testConnection(server.baseUrl(), QStringLiteral("wrong"));
        QCOMPARE(finishTest(*c), QStringLiteral("failed"));
        const QString m = c->testMessage();
        QVERIFY2(m.contains(QLatin1String("refused the API key (HTTP 401)")), qPrintable(m));
        QVERIFY2(m.contains(QLatin1String("Invalid API key")), qPrintable(m));
        QVERIFY2(m.contains(QStringLiteral("127.0.0.1:%1").arg(server.port())), qPrintable(m));
    }

    // A second test replaces the first: only its answer counts.
    void aNewTestReplacesTheRunningOne() {
        QTemporaryDir dir;
        FakeOpenAiServer slow, quick;
        slow.route("/v1/models", [](QTcpSocket*, const SeenRequest&) {});   // never answers
        quick.route("/v1/models", [](QTcpSocket* s, const SeenRequest&) { FakeOpenAiServer::respond(s, 200, "OK", kModels); });
        auto c = controller(dir.path());
        c->testConnection(slow.baseUrl(), QString());
        QTRY_COMPARE(slow.requests().size(), 1);
        c->testConnection(quick.baseUrl(), QString());
        QCOMPARE(finishTest(*c), QStringLiteral("ok"));
        QCOMPARE(c->testModels().size(), 2);
        QTRY_COMPARE(slow.disconnects(), 1);   // the first request was dropped
        // A cleared form forgets the result.
        QSignalSpy changed(c.get(), &RemoteEnginesController::testChanged);
        c->resetTest();
        QCOMPARE(c->testState(), QString());
        QVERIFY(c->testModels().isEmpty());
        QCOMPARE(changed.count(), 1);
        // And a test still running is dropped without an answer.
        c->testConnection(slow.baseUrl(), QString());
        QTRY_COMPARE(slow.requests().size(), 2);
        c->resetTest();
        QCOMPARE(c->testState(), QString());
        QTRY_COMPARE(slow.disconnects(), 2);
    }

    void keyStorageLine() {
        QTemporaryDir dir;
        auto c = controller(dir.path());
        QVERIFY(!c->keysInKeyring());
        const QString line = c->keyStorage();
        QVERIFY2(line.startsWith(QLatin1String("API keys are kept in ")), qPrintable(line));
        QVERIFY2(line.contains(QDir(dir.path()).filePath(QStringLiteral("remote-endpoint-keys.json"))), qPrintable(line));
        QVERIFY2(line.contains(QLatin1String("readable only by you")), qPrintable(line));
        QVERIFY2(line.endsWith(u'.') || line.endsWith(u')'), qPrintable(line));
    }

    void damagedListIsReported() {
        QTemporaryDir dir;
        QFile f(QDir(dir.path()).filePath(QStringLiteral("remote-endpoints.json")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{ not json");
        f.close();
        auto c = controller(dir.path());
        QVERIFY2(c->loadProblem().contains(QLatin1String("is damaged")), qPrintable(c->loadProblem()));
        QVERIFY(c->names().isEmpty());
    }
};

QTEST_GUILESS_MAIN(RemoteEnginesControllerTest)
#include "remote_engines_controller_test.moc"
