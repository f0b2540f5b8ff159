#include "tools/ToolRegistry.h"

#include <QPointer>
#include <QProcess>
#include <QRegularExpression>
#include <QThreadPool>
#include <QUrl>

#include "app/common/inbox.h"
#include "app/common/json_source_text.h"
#include "tools/CalculatorTool.h"
#include "tools/DateTimeTool.h"
#include "tools/ShellTool.h"
#include "tools/ToolArguments.h"
#include "tools/WorkspaceTools.h"
#include "tools/mcp/LoginPath.h"
#include "tools/mcp/McpHttpClient.h"
#include "tools/mcp/McpStdioClient.h"

namespace weir::desktop {
namespace {

QString policyText(ToolRegistry::Policy p) {
    switch (p) {
    case ToolRegistry::Policy::Always: return QStringLiteral("always");
    case ToolRegistry::Policy::Never: return QStringLiteral("never");
    default: return QStringLiteral("ask");
    }
}

ToolRegistry::Policy policyFrom(const QString& s) {
    if (s == u"always") return ToolRegistry::Policy::Always;
    if (s == u"never") return ToolRegistry::Policy::Never;
    return ToolRegistry::Policy::Ask;
}

// Read-only built-in tools run without asking unless the user says otherwise.
bool readOnlyBuiltin(const QString& name) {
    return name == u"calculator" || name == u"current_datetime" || name == u"list_files" || name == u"read_file" ||
           name == u"search_files";
}

} // namespace

ToolRegistry::ToolRegistry(const QString& settingsFile, QObject* parent)
    : QObject(parent), workspace_(std::make_shared<WorkspaceFolder>()) {
    builtins_ = {std::make_shared<CalculatorTool>(), std::make_shared<DateTimeTool>(),
                 std::make_shared<ListFilesTool>(workspace_), std::make_shared<ReadFileTool>(workspace_),
                 std::make_shared<SearchFilesTool>(workspace_), std::make_shared<WriteFileTool>(workspace_),
                 std::make_shared<ShellTool>(workspace_)};
    for (const auto& t : builtins_)
        policies_.insert(t->name(), readOnlyBuiltin(t->name()) ? Policy::Always : Policy::Ask);
    if (settingsFile.isEmpty()) return;
    settings_ = std::make_unique<QSettings>(settingsFile, QSettings::IniFormat);
    workspace_->setRoot(settings_->value(QStringLiteral("workspace")).toString());
    shellEnabled_ = settings_->value(QStringLiteral("shellEnabled"), false).toBool();
    settings_->beginGroup(QStringLiteral("policies"));
    for (const QString& k : settings_->childKeys()) policies_.insert(k, policyFrom(settings_->value(k).toString()));
    settings_->endGroup();
    const int n = settings_->beginReadArray(QStringLiteral("mcpServers"));
    for (int i = 0; i < n; ++i) {
        settings_->setArrayIndex(i);
        Server s;
        s.config.name = settings_->value(QStringLiteral("name")).toString();
        s.config.command = settings_->value(QStringLiteral("command")).toString();
        s.config.arguments = settings_->value(QStringLiteral("arguments")).toStringList();
        s.config.url = settings_->value(QStringLiteral("url")).toString();
        s.config.enabled = settings_->value(QStringLiteral("enabled"), true).toBool();
        if (!s.config.name.isEmpty()) servers_.append(s);
    }
    settings_->endArray();
}

ToolRegistry::~ToolRegistry() {
    for (Server& s : servers_) delete s.client;
}

void ToolRegistry::save() {
    if (!settings_) return;
    settings_->setValue(QStringLiteral("workspace"), workspace_->root());
    settings_->setValue(QStringLiteral("shellEnabled"), shellEnabled_);
    settings_->beginGroup(QStringLiteral("policies"));
    for (auto it = policies_.begin(); it != policies_.end(); ++it) settings_->setValue(it.key(), policyText(it.value()));
    settings_->endGroup();
    settings_->beginWriteArray(QStringLiteral("mcpServers"), int(servers_.size()));
    for (int i = 0; i < servers_.size(); ++i) {
        settings_->setArrayIndex(i);
        settings_->setValue(QStringLiteral("name"), servers_[i].config.name);
        settings_->setValue(QStringLiteral("command"), servers_[i].config.command);
        settings_->setValue(QStringLiteral("arguments"), servers_[i].config.arguments);
        settings_->setValue(QStringLiteral("url"), servers_[i].config.url);
        settings_->setValue(QStringLiteral("enabled"), servers_[i].config.enabled);
    }
    settings_->endArray();
    settings_->sync();
}

QHash<QString, ToolRegistry::Entry> ToolRegistry::entries() const {
    QHash<QString, Entry> out;
    for (const auto& t : builtins_) {
        if (t->name() == u"run_shell" && !shellEnabled_) continue;
        out.insert(t->name(), {t, {}, {}, t->description(), t->parameters(), t->parametersJson()});
    }
    for (const Server& s : servers_) {
        if (!s.config.enabled || !s.client || s.client->state() != McpClient::State::Ready) continue;
        for (const McpToolInfo& t : s.client->tools()) {
            // A name another tool has already gets the server's name in front.
            QString name = t.name;
            if (out.contains(name)) name = s.config.name + u'_' + t.name;
            name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_-]")), QStringLiteral("_"));
            // No schema: a tool without arguments. The text keeps the server's key order.
            const bool noSchema = t.inputSchema.isEmpty();
            out.insert(name, {nullptr, s.config.name, t.name, t.description,
                              noSchema ? QJsonObject{{"type", "object"}} : t.inputSchema,
                              noSchema ? QByteArray(R"({"type":"object"})") : t.inputSchemaText});
        }
    }
    return out;
}

QVariantList ToolRegistry::toolList() const {
    const auto all = entries();
    QStringList names = all.keys();
    std::sort(names.begin(), names.end(), [&](const QString& a, const QString& b) {
        const bool ba = all[a].tool != nullptr, bb = all[b].tool != nullptr;
        return ba != bb ? ba : a < b;
    });
    QVariantList out;
    for (const QString& n : names) {
        const Entry& e = all[n];
        out << QVariantMap{{"name", n},
                           {"description", e.description},
                           {"policy", policyName(n)},
                           {"source", e.tool ? QStringLiteral("built-in") : e.server},
                           {"asksAlways", e.tool && e.tool->alwaysAsks()}};
    }
    return out;
}

void ToolRegistry::setWorkspaceFolder(const QString& folder) {
    QString f = folder;
    if (f.startsWith(u"file://")) f = QUrl(f).toLocalFile();
    if (f == workspace_->root()) return;
    workspace_->setRoot(f);
    save();
    emit settingsChanged();
}

void ToolRegistry::setShellEnabled(bool on) {
    if (on == shellEnabled_) return;
    shellEnabled_ = on;
    save();
    emit settingsChanged();
    emit toolsChanged();
}

ToolRegistry::Policy ToolRegistry::policy(const QString& tool) const { return policies_.value(tool, Policy::Ask); }
QString ToolRegistry::policyName(const QString& tool) const { return policyText(policy(tool)); }

QString ToolRegistry::serverOf(const QString& tool) const { return entries().value(tool).server; }

void ToolRegistry::setPolicy(const QString& tool, const QString& p) {
    if (policyName(tool) == p && policies_.contains(tool)) return;
    policies_.insert(tool, policyFrom(p));
    save();
    emit toolsChanged();
}

bool ToolRegistry::isAvailable(const QString& tool) const { return entries().contains(tool); }

bool ToolRegistry::needsApproval(const QString& tool) const {
    const auto all = entries();
    const auto it = all.constFind(tool);
    if (it != all.cend() && it->tool && it->tool->alwaysAsks()) return true;
    return policy(tool) == Policy::Ask;
}

QJsonArray ToolRegistry::openAiTools() const {
    const QVariantList list = toolList();
    const auto all = entries();
    QJsonArray out;
    for (const QVariant& v : list) {
        const QString name = v.toMap().value("name").toString();
        if (policy(name) == Policy::Never) continue;
        const Entry& e = all[name];
        out.append(QJsonObject{{"type", "function"},
                               {"function", QJsonObject{{"name", name}, {"description", e.description},
                                                        {"parameters", e.parameters}}}});
    }
    return out;
}

QByteArray ToolRegistry::openAiToolsText() const {
    const QJsonArray tools = openAiTools();
    const auto all = entries();
    QByteArray out = "[";
    for (qsizetype i = 0; i < tools.size(); ++i) {
        const QString name = tools[i].toObject().value(u"function").toObject().value(u"name").toString();
        // The wrapper in OpenAI's order, the parameters in the tool's.
        const QByteArray order = R"({"type":0,"function":{"name":0,"description":0,"parameters":)" +
                                 all[name].parametersText + "}}";
        if (i > 0) out += ',';
        out += common::orderedJson(tools[i], order);
    }
    return out + ']';
}

QJsonObject ToolRegistry::schemaOf(const QString& tool) const { return entries().value(tool).parameters; }

void ToolRegistry::call(const QString& tool, const QString& argumentsJson, QObject* context, Callback done) {
    const auto all = entries();
    const auto it = all.constFind(tool);
    QPointer<QObject> guard(context);
    auto answer = [guard, done](const ToolResult& r) {
        if (guard) QMetaObject::invokeMethod(guard, [done, r] { done(r); }, Qt::QueuedConnection);
    };
    if (it == all.cend()) return answer({false, tr("there is no tool named '%1'").arg(tool)});
    if (policy(tool) == Policy::Never) return answer({false, tr("the user does not allow '%1'").arg(tool)});
    QJsonObject args;
    QString problem;
    if (!parseArguments(argumentsJson, &args, &problem)) return answer({false, problem});
    problem = validateArguments(args, it->parameters);
    if (!problem.isEmpty()) return answer({false, problem});
    if (it->tool) {
        // The result crosses from the pool thread in an inbox, woken on the
        // context's thread; it closes with the context, so a result that
        // comes after the context went is dropped.
        using Answer = common::Inbox<ToolResult>;
        auto answerInbox = Answer::create(common::Keep::Latest, context, [done](Answer& inbox) {
            std::optional<ToolResult> result = inbox.take();
            inbox.close();  // one answer per call: its wake-up target goes now
            if (result) done(*result);
        });
        std::shared_ptr<const Tool> t = it->tool;
        QThreadPool::globalInstance()->start([t, args, answerInbox] {
            ToolResult r;
            try {
                r = t->run(args);
            } catch (const std::exception& e) {
                r = {false, QString::fromUtf8(e.what())};
            }
            answerInbox->put(std::move(r));
        });
        return;
    }
    Server* s = server(it->server);
    if (!s || !s->client) return answer({false, tr("the MCP server %1 is gone").arg(it->server)});
    // The arguments go to the server in the order the model wrote them.
    s->client->callTool(it->remoteName, args, argumentsJson.toUtf8(), [answer](const ToolResult& r) { answer(r); });
}

ToolRegistry::Server* ToolRegistry::server(const QString& name) {
    for (Server& s : servers_)
        if (s.config.name == name) return &s;
    return nullptr;
}

QVariantList ToolRegistry::serverList() const {
    QVariantList out;
    for (const Server& s : servers_) {
        const QString state = !s.client ? QStringLiteral("off")
                              : s.client->state() == McpClient::State::Ready    ? QStringLiteral("ready")
                              : s.client->state() == McpClient::State::Starting ? QStringLiteral("starting")
                              : s.client->state() == McpClient::State::Failed   ? QStringLiteral("failed")
                                                                                     : QStringLiteral("off");
        out << QVariantMap{{"name", s.config.name},
                           {"command", !s.config.url.isEmpty() ? s.config.url
                                                               : (QStringList{s.config.command} + s.config.arguments).join(u' ')},
                           {"enabled", s.config.enabled},
                           {"state", state},
                           {"status", s.client ? s.client->stateText() : (s.config.enabled ? tr("not started") : tr("off"))},
                           {"log", s.client ? s.client->log() : QString()}};
    }
    return out;
}

QString ToolRegistry::addServer(const QString& name, const QString& commandLine) {
    const QString n = name.trimmed();
    const QStringList parts = QProcess::splitCommand(commandLine);
    if (n.isEmpty()) return tr("The server needs a name.");
    if (parts.isEmpty()) return tr("The server needs a command, for example: npx -y @modelcontextprotocol/server-everything");
    if (server(n)) return tr("There is already a server named %1.").arg(n);
    Server s;
    s.config.name = n;
    if (parts.size() == 1 && (parts.first().startsWith(u"http://") || parts.first().startsWith(u"https://"))) {
        s.config.url = parts.first();
    } else {
        s.config.command = parts.first();
        s.config.arguments = parts.mid(1);
    }
    servers_.append(s);
    save();
    emit serversChanged();
    startServer(servers_.last());
    return {};
}

void ToolRegistry::removeServer(const QString& name) {
    for (int i = 0; i < servers_.size(); ++i) {
        if (servers_[i].config.name != name) continue;
        if (servers_[i].client) servers_[i].client->stop();  // calls in flight end with "stopped"
        delete servers_[i].client;
        servers_.removeAt(i);
        save();
        emit serversChanged();
        emit toolsChanged();
        return;
    }
}

void ToolRegistry::setServerEnabled(const QString& name, bool enabled) {
    Server* s = server(name);
    if (!s || s->config.enabled == enabled) return;
    s->config.enabled = enabled;
    save();
    if (enabled) {
        startServer(*s);
    } else if (s->client) {
        s->client->stop();
    }
    emit serversChanged();
    emit toolsChanged();
}

QString ToolRegistry::serverLog(const QString& name) const {
    for (const Server& s : servers_)
        if (s.config.name == name) return s.client ? s.client->log() : QString();
    return {};
}

void ToolRegistry::startServers() {
    for (Server& s : servers_)
        if (s.config.enabled) startServer(s);
}

void ToolRegistry::startServer(Server& s) {
    if (!s.config.enabled) return;
    if (!loginPathKnown_) {
        // Servers start once the login shell said its PATH.
        if (fetchingPath_) return;
        fetchingPath_ = true;
        fetchLoginPath(this, [this](const QString& path) {
            fetchingPath_ = false;
            setLoginPath(path);
            emit serversChanged();
            startServers();
        });
        return;
    }
    if (!s.client) {
        if (s.config.url.isEmpty()) s.client = new McpStdioClient(s.config);
        else s.client = new McpHttpClient(s.config);
        const QString name = s.config.name;
        connect(s.client, &McpClient::stateChanged, this, [this] {
            emit serversChanged();
            emit toolsChanged();
        });
        connect(s.client, &McpClient::logChanged, this, &ToolRegistry::serversChanged);
    }
    s.client->start(loginPath_);
}

} // namespace weir::desktop
