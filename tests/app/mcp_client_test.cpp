// The MCP client against a real stdio server written with the PyPI `mcp`
// package (tests/app/mcp_add_server.py): initialize, tools/list, tools/call
// through the registry (arguments checked against the server's schema first),
// a tool error, the server's stderr kept for the log view, the enable switch,
// the same server over streamable HTTP, and a server that cannot start, is
// not there, or dies; over both transports, a tool's schema and its call keep
// their key order from the server to the prompt and back
// (tests/app/mcp_ordered_server.py). Skipped without the package.
#include <QJsonArray>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "FakeEngineBackend.h"
#include "chat/ChatController.h"
#include "engine_host/EngineHost.h"
#include "storage/Storage.h"
#include "tools/ToolRegistry.h"
#include "tools/mcp/McpStdioClient.h"

using namespace weir::desktop;
using testing::FakeEngineBackend;
using testing::FakeEngineConfig;

namespace {

int patienceMs() {
    const int scale = qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE");
    return 60000 * (scale > 1 ? scale : 1);
}

QString python() { return qEnvironmentVariable("WEIR_PYTHON", QStringLiteral("python3")); }
QString testScript(const char* name) {
    return qEnvironmentVariable("WEIR_SOURCE_DIR", QStringLiteral(".")) + QStringLiteral("/tests/app/") + QLatin1String(name);
}
QString serverScript() { return testScript("mcp_add_server.py"); }
QString orderedServerScript() { return testScript("mcp_ordered_server.py"); }

bool pythonImports(const QString& statement) {
    QProcess p;
    p.start(python(), {QStringLiteral("-c"), statement});
    return p.waitForFinished(30000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}
bool haveMcp() { return pythonImports(QStringLiteral("import mcp")); }

// A server script serving streamable HTTP on a free port while this lives.
class HttpServerProcess {
public:
    explicit HttpServerProcess(const QString& script) {
        QTcpServer probe;  // a free port
        if (!probe.listen(QHostAddress::LocalHost)) return;
        port_ = probe.serverPort();
        probe.close();
        process_.setProcessChannelMode(QProcess::ForwardedChannels);
        process_.start(python(), {script, QStringLiteral("--http"), QString::number(port_)});
    }
    ~HttpServerProcess() {
        process_.terminate();
        if (!process_.waitForFinished(5000)) process_.kill();
        process_.waitForFinished();
    }
    // Whether it listens now.
    bool listening() const {
        QTcpSocket s;
        s.connectToHost(QHostAddress::LocalHost, port_);
        return s.waitForConnected(200);
    }
    bool started() { return port_ != 0 && process_.waitForStarted(); }
    QString url() const { return QStringLiteral("http://127.0.0.1:%1/mcp").arg(port_); }

private:
    QProcess process_;
    quint16 port_ = 0;
};

// Where each of `keys` first occurs in `text` as a JSON string (-1: nowhere).
QList<qsizetype> positions(const QByteArray& text, const QList<QByteArray>& keys) {
    QList<qsizetype> at;
    for (const QByteArray& k : keys) at << text.indexOf('"' + k + '"');
    return at;
}
// Whether every key was found, each after the one before.
bool inOrder(const QList<qsizetype>& at) {
    for (qsizetype i = 0; i < at.size(); ++i)
        if (at[i] < 0 || (i > 0 && at[i] < at[i - 1])) return false;
    return true;
}

// The app around the tools: chat controller, storage and the scripted fake engine.
struct AgentApp {
    explicit AgentApp(std::vector<std::string> replies) : storage(dir.path()) {
        config.tokenIntervalMs = 1;
        config.record = std::make_shared<FakeEngineConfig::Record>();
        config.script = std::make_shared<FakeEngineConfig::Script>();
        for (auto& r : replies) config.script->replies.push_back(std::move(r));
        tools.setLoginPath(qEnvironmentVariable("PATH"));
    }
    // The database opened, then the app on it with the fake model loaded.
    bool start() {
        if (!storage.open()) return false;
        host = std::make_unique<EngineHost>(FakeEngineBackend::factory(config));
        chat = std::make_unique<ChatController>(&storage, host.get());
        chat->setToolRegistry(&tools);
        host->load(QStringLiteral("fake.gguf"));
        return QTest::qWaitFor([&] { return host->state() == EngineHost::Ready; }, patienceMs());
    }
    FakeEngineConfig config;
    QTemporaryDir dir;
    Storage storage;
    std::unique_ptr<EngineHost> host;
    ToolRegistry tools;
    std::unique_ptr<ChatController> chat;
};

std::optional<ToolResult> callAndWait(ToolRegistry& tools, const QString& name, const QString& args) {
    QObject context;
    std::optional<ToolResult> result;
    tools.call(name, args, &context, [&](const ToolResult& r) { result = r; });
    // No answer in time: the caller's check of the empty result says so.
    (void)QTest::qWaitFor([&] { return result.has_value(); }, patienceMs());
    return result;
}

} // namespace

class McpClientTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (!haveMcp()) QSKIP("the python `mcp` package is not installed (packaging/requirements.txt)");
    }

    void toolsOfAStdioServer() {
        ToolRegistry tools;
        tools.setLoginPath(qEnvironmentVariable("PATH"));
        QCOMPARE(tools.addServer(QStringLiteral("test"), python() + u' ' + serverScript()), QString());
        QTRY_VERIFY_WITH_TIMEOUT(tools.serverList().value(0).toMap().value("state").toString() == u"ready", patienceMs());
        QVERIFY(tools.isAvailable(QStringLiteral("add")));
        QVERIFY(tools.needsApproval(QStringLiteral("add")));  // MCP tools ask until the user says otherwise
        QCOMPARE(tools.serverOf(QStringLiteral("add")), QStringLiteral("test"));  // named on its tool cards
        QCOMPARE(tools.serverOf(QStringLiteral("calculator")), QString());
        bool offered = false;
        for (const QJsonValue& t : tools.openAiTools()) {
            const QJsonObject f = t.toObject()["function"].toObject();
            if (f["name"].toString() == u"add") {
                offered = true;
                QCOMPARE(f["description"].toString(), QStringLiteral("Adds two numbers."));
                QCOMPARE(f["parameters"].toObject()["required"].toArray().size(), 2);
            }
        }
        QVERIFY(offered);

        auto r = callAndWait(tools, QStringLiteral("add"), QStringLiteral("{\"a\": 2, \"b\": 3}"));
        QVERIFY(r);
        QVERIFY2(r->ok, qPrintable(r->text));
        QCOMPARE(r->text, QStringLiteral("5"));

        r = callAndWait(tools, QStringLiteral("add"), QStringLiteral("{\"a\": \"two\", \"b\": 3}"));
        QVERIFY(r && !r->ok);
        QVERIFY2(r->text.contains(u"arguments.a: expected number"), qPrintable(r->text));

        r = callAndWait(tools, QStringLiteral("fail"), QStringLiteral("{\"reason\": \"nope\"}"));
        QVERIFY(r && !r->ok);
        QVERIFY2(r->text.contains(u"fail"), qPrintable(r->text));

        // Its stderr is kept for the log view.
        QTRY_VERIFY_WITH_TIMEOUT(tools.serverLog(QStringLiteral("test")).contains(u"weir-test MCP server starting"), patienceMs());

        // A call in flight when the server is removed still gets its answer.
        {
            QObject context;
            std::optional<ToolResult> pending;
            tools.call(QStringLiteral("add"), QStringLiteral("{\"a\": 1, \"b\": 1}"), &context,
                       [&](const ToolResult& r) { pending = r; });
            tools.removeServer(QStringLiteral("test"));
            QTRY_VERIFY_WITH_TIMEOUT(pending.has_value(), patienceMs());
            QVERIFY(!pending->ok);
            QVERIFY2(pending->text.contains(u"stopped"), qPrintable(pending->text));
            QVERIFY(!tools.isAvailable(QStringLiteral("add")));
            QCOMPARE(tools.addServer(QStringLiteral("test"), python() + u' ' + serverScript()), QString());
            QTRY_VERIFY_WITH_TIMEOUT(tools.isAvailable(QStringLiteral("add")), patienceMs());
        }

        // Switched off: its tools are gone, and back on they return.
        tools.setServerEnabled(QStringLiteral("test"), false);
        QVERIFY(!tools.isAvailable(QStringLiteral("add")));
        tools.setServerEnabled(QStringLiteral("test"), true);
        QTRY_VERIFY_WITH_TIMEOUT(tools.isAvailable(QStringLiteral("add")), patienceMs());
    }

    // The same server over streamable HTTP: JSON-RPC POSTs, answers as JSON or
    // server-sent events, the session id sent back.
    void toolsOfAStreamableHttpServer() {
        HttpServerProcess server(serverScript());
        QVERIFY(server.started());
        const QString url = server.url();
        QTRY_VERIFY_WITH_TIMEOUT(server.listening(), patienceMs());

        ToolRegistry tools;
        tools.setLoginPath(qEnvironmentVariable("PATH"));
        QCOMPARE(tools.addServer(QStringLiteral("http"), url), QString());
        QCOMPARE(tools.serverList().value(0).toMap().value("command").toString(), url);
        QTRY_VERIFY_WITH_TIMEOUT(tools.serverList().value(0).toMap().value("state").toString() == u"ready", patienceMs());
        QVERIFY(tools.isAvailable(QStringLiteral("add")));
        auto r = callAndWait(tools, QStringLiteral("add"), QStringLiteral("{\"a\": 40, \"b\": 2}"));
        QVERIFY(r);
        QVERIFY2(r->ok, qPrintable(r->text));
        QCOMPARE(r->text, QStringLiteral("42"));
        r = callAndWait(tools, QStringLiteral("fail"), QStringLiteral("{\"reason\": \"nope\"}"));
        QVERIFY(r && !r->ok);
    }

    void anHttpServerThatIsNotThereSaysWhy() {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost));
        const quint16 port = probe.serverPort();
        probe.close();
        ToolRegistry tools;
        tools.setLoginPath(qEnvironmentVariable("PATH"));
        QCOMPARE(tools.addServer(QStringLiteral("gone"), QStringLiteral("http://127.0.0.1:%1/mcp").arg(port)), QString());
        QTRY_VERIFY_WITH_TIMEOUT(tools.serverList().value(0).toMap().value("state").toString() == u"failed", patienceMs());
        QVERIFY2(tools.serverList().value(0).toMap().value("status").toString().contains(u"cannot reach"),
                 qPrintable(tools.serverList().value(0).toMap().value("status").toString()));
    }

    void aServerThatCannotStartSaysWhy() {
        ToolRegistry tools;
        tools.setLoginPath(QStringLiteral("/nonexistent-bin"));
        QCOMPARE(tools.addServer(QStringLiteral("ghost"), QStringLiteral("weir-no-such-mcp-server --stdio")), QString());
        const QVariantMap s = tools.serverList().value(0).toMap();
        QCOMPARE(s.value("state").toString(), QStringLiteral("failed"));
        QVERIFY2(s.value("status").toString().contains(u"'weir-no-such-mcp-server' is not on the login PATH"),
                 qPrintable(s.value("status").toString()));
        QVERIFY(!tools.addServer(QStringLiteral("ghost"), QStringLiteral("x")).isEmpty());  // names are unique
        QVERIFY(!tools.addServer(QStringLiteral("empty"), QStringLiteral("   ")).isEmpty());
    }

    void aServerThatDiesFailsItsCalls() {
        McpServerConfig config;
        config.name = QStringLiteral("dying");
        config.command = python();
        // Answers initialize and tools/list, then exits on the first call.
        config.arguments = {QStringLiteral("-c"), QStringLiteral(
            "import sys, json\n"
            "for line in sys.stdin:\n"
            "    m = json.loads(line)\n"
            "    if m.get('method') == 'initialize':\n"
            "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'protocolVersion': '2025-06-18', 'capabilities': {}, 'serverInfo': {'name': 'd'}}}), flush=True)\n"
            "    elif m.get('method') == 'tools/list':\n"
            "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'tools': [{'name': 'boom', 'inputSchema': {'type': 'object'}}]}}), flush=True)\n"
            "    elif m.get('method') == 'tools/call':\n"
            "        sys.exit(4)\n")};
        McpStdioClient client(config);
        client.start(qEnvironmentVariable("PATH"));
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == McpStdioClient::State::Ready, patienceMs());
        QCOMPARE(client.tools().size(), 1);
        std::optional<ToolResult> result;
        client.callTool(QStringLiteral("boom"), {}, {}, [&](const ToolResult& r) { result = r; });
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), patienceMs());
        QVERIFY(!result->ok);
        QVERIFY2(result->text.contains(u"exited with code 4"), qPrintable(result->text));
        QCOMPARE(client.state(), McpStdioClient::State::Failed);
    }

    // A server's tool whose properties are zeta, alpha, mid (not
    // alphabetical), forced in an agent conversation: the prompt's tool list
    // and the forced call's schema list them in that order, and the call the
    // model wrote in that order reaches the server so, as its answer on the
    // card says. A QJsonObject on the way would sort them.
    void aToolKeepsItsServersKeyOrder_data() {
        QTest::addColumn<bool>("overHttp");
        QTest::newRow("stdio") << false;
        QTest::newRow("streamable HTTP") << true;
    }
    void aToolKeepsItsServersKeyOrder() {
        QFETCH(bool, overHttp);
        if (!pythonImports(QStringLiteral("from mcp.server.mcpserver import MCPServer")))
            QSKIP("mcp_ordered_server.py needs the `mcp` package 2 or later (MCPServer)");
        std::optional<HttpServerProcess> http;
        QString command = python() + u' ' + orderedServerScript();
        if (overHttp) {
            http.emplace(orderedServerScript());
            QVERIFY(http->started());
            QTRY_VERIFY_WITH_TIMEOUT(http->listening(), patienceMs());
            command = http->url();
        }
        AgentApp app({R"({"name": "place", "arguments": {"zeta": "z", "alpha": "a", "mid": "m"}})", "Placed."});
        QVERIFY(app.start());
        QCOMPARE(app.tools.addServer(QStringLiteral("order"), command), QString());
        QTRY_VERIFY_WITH_TIMEOUT(app.tools.isAvailable(QStringLiteral("place")), patienceMs());
        app.tools.setPolicy(QStringLiteral("place"), QStringLiteral("always"));
        const QList<QByteArray> order{"zeta", "alpha", "mid"};

        const QByteArray offered = app.tools.openAiToolsText();
        const QByteArray place = offered.mid(offered.indexOf(R"("name":"place")"));
        QVERIFY2(inOrder(positions(place, order)), place.constData());

        QSignalSpy finished(app.chat.get(), &ChatController::agentFinished);
        const qint64 conv = app.chat->newConversation();
        QVERIFY(app.chat->sendForcing(conv, QStringLiteral("Where?"), QStringLiteral("place")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, patienceMs());
        {
            std::lock_guard lock(app.config.record->mutex);
            QVERIFY(!app.config.record->toolChats.empty() && !app.config.record->requests.empty());
            const QByteArray prompt = QByteArray::fromStdString(app.config.record->toolChats[0].toolsJson);
            QVERIFY2(inOrder(positions(prompt.mid(prompt.indexOf(R"("name":"place")")), order)), prompt.constData());
            const QByteArray schema = QByteArray::fromStdString(app.config.record->requests[0].constraint.schema);
            QVERIFY2(schema.contains("place") && inOrder(positions(schema, order)), schema.constData());
        }
        const QVariantList cards = app.chat->messages()->get(1).value("toolCalls").toList();
        QCOMPARE(cards.size(), 1);
        const QVariantMap card = cards[0].toMap();
        QCOMPARE(card.value("state").toString(), QStringLiteral("done"));
        QVERIFY2(inOrder(positions(card.value("arguments").toString().toUtf8(), order)),
                 qPrintable(card.value("arguments").toString()));
        QCOMPARE(card.value("result").toString(), QStringLiteral("zeta,alpha,mid"));  // as the server got them
    }
};

QTEST_GUILESS_MAIN(McpClientTest)
#include "mcp_client_test.moc"
