// The MCP client against a real stdio server written with the PyPI `mcp`
// package (tests/app/mcp_add_server.py): initialize, tools/list, tools/call
// through the registry (arguments checked against the server's schema first),
// a tool error, the server's stderr kept for the log view, the enable switch,
// the same server over streamable HTTP, and a server that cannot start, is
// not there, or dies. Skipped without the package.
#include <QProcess>
#include <QScopeGuard>
#include <QTcpServer>
#include <QTcpSocket>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "tools/ToolRegistry.h"
#include "tools/mcp/McpStdioClient.h"

using namespace weir::desktop;

namespace {

int patienceMs() {
    const int scale = qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE");
    return 60000 * (scale > 1 ? scale : 1);
}

QString python() { return qEnvironmentVariable("WEIR_PYTHON", QStringLiteral("python3")); }
QString serverScript() {
    return qEnvironmentVariable("WEIR_SOURCE_DIR", QStringLiteral(".")) + QStringLiteral("/tests/app/mcp_add_server.py");
}

bool haveMcp() {
    QProcess p;
    p.start(python(), {QStringLiteral("-c"), QStringLiteral("import mcp")});
    return p.waitForFinished(30000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

std::optional<ToolResult> callAndWait(ToolRegistry& tools, const QString& name, const QString& args) {
    QObject context;
    std::optional<ToolResult> result;
    tools.call(name, args, &context, [&](const ToolResult& r) { result = r; });
    QTest::qWaitFor([&] { return result.has_value(); }, patienceMs());
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
        QTcpServer probe;  // a free port
        QVERIFY(probe.listen(QHostAddress::LocalHost));
        const quint16 port = probe.serverPort();
        probe.close();
        QProcess server;
        server.setProcessChannelMode(QProcess::ForwardedChannels);
        server.start(python(), {serverScript(), QStringLiteral("--http"), QString::number(port)});
        QVERIFY(server.waitForStarted());
        auto cleanup = qScopeGuard([&] {
            server.terminate();
            if (!server.waitForFinished(5000)) server.kill();
            server.waitForFinished();
        });
        const QString url = QStringLiteral("http://127.0.0.1:%1/mcp").arg(port);
        // Wait until it listens.
        QTRY_VERIFY_WITH_TIMEOUT([&] {
            QTcpSocket s;
            s.connectToHost(QHostAddress::LocalHost, port);
            return s.waitForConnected(200);
        }(), patienceMs());

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
        client.callTool(QStringLiteral("boom"), {}, [&](const ToolResult& r) { result = r; });
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), patienceMs());
        QVERIFY(!result->ok);
        QVERIFY2(result->text.contains(u"exited with code 4"), qPrintable(result->text));
        QCOMPARE(client.state(), McpStdioClient::State::Failed);
    }
};

QTEST_GUILESS_MAIN(McpClientTest)
#include "mcp_client_test.moc"
