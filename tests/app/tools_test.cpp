// The built-in tools: the calculator's arithmetic and its errors, the date
// and time with a time zone, the workspace tools kept inside their folder
// (absolute paths, "..", symlinks out of it, for reading and for writing),
// argument checking against each schema, and the registry: write_file and
// run_shell always wait for approval, the shell is off until switched on, and
// a tool runs off the GUI thread.
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QScopeGuard>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimeZone>

#include "tools/CalculatorTool.h"
#include "tools/DateTimeTool.h"
#include "tools/Expression.h"
#include "tools/ShellTool.h"
#include "tools/ToolArguments.h"
#include "tools/ToolRegistry.h"
#include "tools/WorkspaceTools.h"
#include "tools/mcp/LoginPath.h"

using namespace weir::desktop;

namespace {

int patienceMs() {
    const int scale = qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE");
    return 20000 * (scale > 1 ? scale : 1);
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

} // namespace

class ToolsTest : public QObject {
    Q_OBJECT
private slots:
    void calculator_data() {
        QTest::addColumn<QString>("expression");
        QTest::addColumn<QString>("result");
        QTest::newRow("precedence") << QStringLiteral("2+3*4") << QStringLiteral("14");
        QTest::newRow("parentheses") << QStringLiteral("(2+3)*4") << QStringLiteral("20");
        QTest::newRow("power is right-associative") << QStringLiteral("2^3^2") << QStringLiteral("512");
        QTest::newRow("unary minus") << QStringLiteral("-2^2") << QStringLiteral("-4");
        QTest::newRow("modulo") << QStringLiteral("17 % 5") << QStringLiteral("2");
        QTest::newRow("division") << QStringLiteral("7/2") << QStringLiteral("3.5");
        QTest::newRow("sqrt") << QStringLiteral("sqrt(144)") << QStringLiteral("12");
        QTest::newRow("log of e") << QStringLiteral("log(e)") << QStringLiteral("1");
        QTest::newRow("exp") << QStringLiteral("exp(0)") << QStringLiteral("1");
        QTest::newRow("cos pi") << QStringLiteral("cos(pi)") << QStringLiteral("-1");
        QTest::newRow("scientific") << QStringLiteral("1.5e3 + 1") << QStringLiteral("1501");
        QTest::newRow("nested") << QStringLiteral("sqrt((3^2 + 4^2)) * 2") << QStringLiteral("10");
    }
    void calculator() {
        QFETCH(QString, expression);
        QFETCH(QString, result);
        const ToolResult r = CalculatorTool().run({{"expression", expression}});
        QVERIFY2(r.ok, qPrintable(r.text));
        QCOMPARE(r.text, result);
    }

    void calculatorErrors_data() {
        QTest::addColumn<QString>("expression");
        QTest::addColumn<QString>("message");
        QTest::newRow("division by zero") << QStringLiteral("1/0") << QStringLiteral("division by zero at 2");
        QTest::newRow("unknown function") << QStringLiteral("foo(2)") << QStringLiteral("unknown name 'foo' at 1");
        QTest::newRow("unclosed") << QStringLiteral("(1+2") << QStringLiteral("missing ')'");
        QTest::newRow("trailing") << QStringLiteral("1+2)") << QStringLiteral("unexpected ')' at 4");
        QTest::newRow("empty") << QStringLiteral("  ") << QStringLiteral("empty");
        QTest::newRow("sqrt negative") << QStringLiteral("sqrt(-1)") << QStringLiteral("sqrt of a negative number");
        QTest::newRow("log zero") << QStringLiteral("log(0)") << QStringLiteral("not positive");
        QTest::newRow("letters") << QStringLiteral("2 + $") << QStringLiteral("unexpected '$' at 5");
    }
    void calculatorErrors() {
        QFETCH(QString, expression);
        QFETCH(QString, message);
        const ToolResult r = CalculatorTool().run({{"expression", expression}});
        QVERIFY(!r.ok);
        QVERIFY2(r.text.contains(message), qPrintable(r.text));
    }

    void dateTimeInAZone() {
        const ToolResult r = DateTimeTool().run({{"timezone", "Asia/Tokyo"}});
        QVERIFY2(r.ok, qPrintable(r.text));
        QVERIFY2(r.text.contains(u"Asia/Tokyo") && r.text.contains(u"UTC+09:00"), qPrintable(r.text));
        // The ISO date at the start is today's in Tokyo.
        const QDateTime tokyo = QDateTime::currentDateTime().toTimeZone(QTimeZone("Asia/Tokyo"));
        QVERIFY2(r.text.startsWith(tokyo.date().toString(Qt::ISODate)), qPrintable(r.text));
        const ToolResult bad = DateTimeTool().run({{"timezone", "Mars/Olympus"}});
        QVERIFY(!bad.ok);
        QVERIFY(bad.text.contains(u"unknown time zone 'Mars/Olympus'"));
    }

    void argumentsAreCheckedAgainstTheSchema() {
        const QJsonObject schema = CalculatorTool().parameters();
        QCOMPARE(validateArguments(QJsonObject{{"expression", "1"}}, schema), QString());
        QCOMPARE(validateArguments(QJsonObject{}, schema), QStringLiteral("arguments.expression: required, missing"));
        QCOMPARE(validateArguments(QJsonObject{{"expression", 3}}, schema),
                 QStringLiteral("arguments.expression: expected string, got a number"));
        QCOMPARE(validateArguments(QJsonObject{{"expression", "1"}, {"x", 1}}, schema),
                 QStringLiteral("arguments.x: not a known argument"));
        QJsonObject args;
        QString error;
        QVERIFY(!parseArguments(QStringLiteral("{\"expression\": "), &args, &error));
        QVERIFY2(error.contains(u"not JSON"), qPrintable(error));
        QVERIFY(!parseArguments(QStringLiteral("[1]"), &args, &error));
        QVERIFY(parseArguments(QString(), &args, &error) && args.isEmpty());
    }

    void workspaceStaysInsideItsFolder() {
        QTemporaryDir base;
        const QString root = base.filePath(QStringLiteral("ws"));
        const QString outside = base.filePath(QStringLiteral("secret"));
        QVERIFY(QDir().mkpath(root + QStringLiteral("/notes")));
        QVERIFY(QDir().mkpath(outside));
        writeFile(root + QStringLiteral("/notes/todo.txt"), "buy milk\ncall Bob\n");
        writeFile(outside + QStringLiteral("/key.txt"), "hunter2\n");
        QVERIFY(QFile::link(outside, root + QStringLiteral("/escape")));                      // a folder link out
        QVERIFY(QFile::link(outside + QStringLiteral("/key.txt"), root + QStringLiteral("/key.txt")));  // a file link out
        QVERIFY(QFile::link(root + QStringLiteral("/notes/todo.txt"), root + QStringLiteral("/inside.txt")));  // stays in

        auto folder = std::make_shared<WorkspaceFolder>();
        const ReadFileTool read(folder);
        QVERIFY(!read.run({{"path", "notes/todo.txt"}}).ok);  // no folder chosen yet
        folder->setRoot(root);

        ToolResult r = read.run({{"path", "notes/todo.txt"}});
        QVERIFY2(r.ok, qPrintable(r.text));
        QCOMPARE(r.text, QStringLiteral("buy milk\ncall Bob\n"));
        r = read.run({{"path", "inside.txt"}});
        QVERIFY2(r.ok, qPrintable(r.text));

        const QStringList refused = {outside + QStringLiteral("/key.txt"), QStringLiteral("../secret/key.txt"),
                                     QStringLiteral("notes/../../secret/key.txt"), QStringLiteral("escape/key.txt"),
                                     QStringLiteral("key.txt"), QStringLiteral("~/key.txt")};
        for (const QString& path : refused) {
            r = read.run({{"path", path}});
            QVERIFY2(!r.ok, qPrintable(path));
            QVERIFY2(!r.text.contains(u"hunter2"), qPrintable(path));
        }
        QVERIFY(read.run({{"path", "escape/key.txt"}}).text.contains(u"outside the workspace"));
        QVERIFY(read.run({{"path", "../secret/key.txt"}}).text.contains(u"'..' is not allowed"));

        // Writing: not through a link out, not next to "..", and new files only in folders inside.
        const WriteFileTool write(folder);
        QVERIFY(!write.run({{"path", "escape/new.txt"}, {"content", "x"}}).ok);
        QVERIFY(!write.run({{"path", "key.txt"}, {"content", "x"}}).ok);
        QVERIFY(!write.run({{"path", "../new.txt"}, {"content", "x"}}).ok);
        QVERIFY(!QFile::exists(outside + QStringLiteral("/new.txt")));
        QCOMPARE(QFile(outside + QStringLiteral("/key.txt")).size(), qint64(8));
        r = write.run({{"path", "notes/plan.md"}, {"content", "# Plan\n"}});
        QVERIFY2(r.ok, qPrintable(r.text));
        QFile written(root + QStringLiteral("/notes/plan.md"));
        QVERIFY(written.open(QIODevice::ReadOnly));
        QCOMPARE(written.readAll(), QByteArray("# Plan\n"));

        // list and search never enter the link out.
        r = ListFilesTool(folder).run({{"path", "."}});
        QVERIFY2(r.ok && r.text.contains(u"notes/"), qPrintable(r.text));
        r = SearchFilesTool(folder).run({{"query", "hunter"}});
        QVERIFY2(r.ok && !r.text.contains(u"hunter2"), qPrintable(r.text));
        r = SearchFilesTool(folder).run({{"query", "BOB"}});
        QVERIFY2(r.ok && r.text.contains(u"notes/todo.txt:2: call Bob"), qPrintable(r.text));
        QVERIFY(!ListFilesTool(folder).run({{"path", "escape"}}).ok);
    }

    void shellRunsWithATimeoutAndACap() {
        auto folder = std::make_shared<WorkspaceFolder>();
        QTemporaryDir dir;
        folder->setRoot(dir.path());
        ToolResult r = ShellTool(folder).run({{"command", "echo hello; pwd"}});
        QVERIFY2(r.ok, qPrintable(r.text));
        QVERIFY(r.text.contains(u"hello") && r.text.contains(QFileInfo(dir.path()).canonicalFilePath()));
        QVERIFY(r.text.contains(u"[exit code 0]"));
        r = ShellTool(folder).run({{"command", "exit 3"}});
        QVERIFY(!r.ok && r.text.contains(u"[exit code 3]"));
        r = ShellTool(folder, 300).run({{"command", "sleep 30"}});
        QVERIFY(!r.ok);
        QVERIFY2(r.text.contains(u"timed out"), qPrintable(r.text));
        r = ShellTool(folder, 30000, 1000).run({{"command", "yes"}});
        QVERIFY2(r.text.contains(u"output cut at 1000 bytes"), qPrintable(r.text.right(200)));
    }

    void registryPolicies() {
        QTemporaryDir dir;
        const QString ini = dir.filePath(QStringLiteral("tools.ini"));
        {
            ToolRegistry tools(ini);
            QStringList offered;
            for (const QJsonValue& t : tools.openAiTools()) offered << t.toObject()["function"].toObject()["name"].toString();
            QVERIFY(offered.contains(u"calculator"));
            QVERIFY(offered.contains(u"write_file"));
            QVERIFY(!offered.contains(u"run_shell"));  // off by default
            QVERIFY(!tools.needsApproval(QStringLiteral("calculator")));
            QVERIFY(tools.needsApproval(QStringLiteral("write_file")));
            tools.setPolicy(QStringLiteral("write_file"), QStringLiteral("always"));
            QVERIFY(tools.needsApproval(QStringLiteral("write_file")));  // writes ask whatever the policy
            tools.setShellEnabled(true);
            QVERIFY(tools.isAvailable(QStringLiteral("run_shell")));
            QVERIFY(tools.needsApproval(QStringLiteral("run_shell")));
            tools.setPolicy(QStringLiteral("calculator"), QStringLiteral("never"));
            tools.setWorkspaceFolder(dir.path());
        }
        ToolRegistry again(ini);  // kept in tools.ini
        QCOMPARE(again.policyName(QStringLiteral("calculator")), QStringLiteral("never"));
        QVERIFY(again.shellEnabled());
        QCOMPARE(again.workspaceFolder(), dir.path());
        for (const QJsonValue& t : again.openAiTools())
            QVERIFY(t.toObject()["function"].toObject()["name"].toString() != u"calculator");
    }

    // The tools as text (what the prompt and a forced call are written from)
    // are the same list, with each tool's properties in its own order:
    // write_file's path before its content, search_files' query before its path.
    void toolsTextKeepsEachSchemasOrder() {
        QTemporaryDir dir;
        ToolRegistry tools(dir.filePath(QStringLiteral("tools.ini")));
        const QByteArray text = tools.openAiToolsText();
        QCOMPARE(QJsonDocument::fromJson(text).array(), tools.openAiTools());
        auto schemaText = [&](const char* name) {
            const qsizetype at = text.indexOf(QByteArray("\"name\":\"") + name + '"');
            return text.mid(text.indexOf("\"parameters\"", at));
        };
        const QByteArray write = schemaText("write_file");
        QVERIFY2(write.indexOf("\"path\"") < write.indexOf("\"content\""), write.constData());
        const QByteArray search = schemaText("search_files");
        QVERIFY2(search.indexOf("\"query\"") < search.indexOf("\"path\""), search.constData());
    }

    // MCP servers start with the PATH of the user's login shell; a shell that
    // fails leaves the app's own PATH.
    void loginPathComesFromTheLoginShell() {
        QTemporaryDir dir;
        const QString shell = dir.filePath(QStringLiteral("fake-login-shell"));
        writeFile(shell, "#!/bin/sh\n[ \"$1\" = -lc ] || exit 3\nprintf %s /weir/login/bin:/usr/bin\n");
        QVERIFY(QFile::setPermissions(shell, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        const QByteArray savedShell = qgetenv("SHELL");
        auto restore = qScopeGuard([&] { qputenv("SHELL", savedShell); });
        QObject context;
        std::optional<QString> path;
        qputenv("SHELL", shell.toUtf8());
        fetchLoginPath(&context, [&](const QString& p) { path = p; });
        QTRY_VERIFY_WITH_TIMEOUT(path.has_value(), patienceMs());
        QCOMPARE(*path, QStringLiteral("/weir/login/bin:/usr/bin"));
        path.reset();
        qputenv("SHELL", dir.filePath(QStringLiteral("no-such-shell")).toUtf8());
        fetchLoginPath(&context, [&](const QString& p) { path = p; });
        QTRY_VERIFY_WITH_TIMEOUT(path.has_value(), patienceMs());
        QCOMPARE(*path, qEnvironmentVariable("PATH"));
    }

    void registryRunsToolsOffTheGuiThread() {
        ToolRegistry tools;
        QObject context;
        std::optional<ToolResult> result;
        tools.call(QStringLiteral("calculator"), QStringLiteral("{\"expression\": \"6*7\"}"), &context,
                   [&](const ToolResult& r) {
                       QCOMPARE(QThread::currentThread(), context.thread());  // answered on the caller's thread
                       result = r;
                   });
        QVERIFY(!result);  // never synchronously
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), patienceMs());
        QVERIFY(result->ok);
        QCOMPARE(result->text, QStringLiteral("42"));
        result.reset();
        tools.call(QStringLiteral("calculator"), QStringLiteral("{\"expr\": \"1\"}"), &context,
                   [&](const ToolResult& r) { result = r; });
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), patienceMs());
        QVERIFY(!result->ok);
        QVERIFY2(result->text.contains(u"arguments.expression: required"), qPrintable(result->text));
        result.reset();
        tools.call(QStringLiteral("teleport"), QStringLiteral("{}"), &context, [&](const ToolResult& r) { result = r; });
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), patienceMs());
        QVERIFY(result->text.contains(u"no tool named 'teleport'"));
    }
};

QTEST_GUILESS_MAIN(ToolsTest)
#include "tools_test.moc"
