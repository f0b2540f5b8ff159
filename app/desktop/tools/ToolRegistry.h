#pragma once
// Every tool the model can be offered: the built-in ones (calculator, date and
// time, workspace files, shell) and those of the enabled MCP servers, with
// the user's approval policy for each (ask / always / never) and the Tools
// page's settings (workspace folder, shell switch, MCP servers), kept in
// DATA/tools.ini. Lives on the GUI thread; call() runs a built-in tool on
// the global QThreadPool and an MCP tool through its server's process, so
// neither the GUI nor the engine ever waits for a tool.
#include <QHash>
#include <QJsonArray>
#include <QObject>
#include <QSettings>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>
#include <functional>
#include <memory>
#include <vector>

#include "tools/Tool.h"
#include "tools/WorkspaceFolder.h"
#include "tools/mcp/McpTypes.h"

namespace weir::desktop {

class McpClient;

class ToolRegistry : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("ToolRegistry is created by the app")
    // One map per tool: name, description, policy ("ask", "always", "never"),
    // source ("built-in" or the MCP server's name), asksAlways, available.
    Q_PROPERTY(QVariantList tools READ toolList NOTIFY toolsChanged)
    Q_PROPERTY(QString workspaceFolder READ workspaceFolder WRITE setWorkspaceFolder NOTIFY settingsChanged)
    Q_PROPERTY(bool shellEnabled READ shellEnabled WRITE setShellEnabled NOTIFY settingsChanged)
    // One map per MCP server: name, command (the command line), enabled, state, status, log.
    Q_PROPERTY(QVariantList servers READ serverList NOTIFY serversChanged)
    Q_PROPERTY(QString loginPath READ loginPath NOTIFY serversChanged)

public:
    enum class Policy { Ask, Always, Never };
    using Callback = std::function<void(const ToolResult&)>;

    // `settingsFile` empty: nothing is saved (tests).
    explicit ToolRegistry(const QString& settingsFile = {}, QObject* parent = nullptr);
    ~ToolRegistry() override;

    QVariantList toolList() const;
    QString workspaceFolder() const { return workspace_->root(); }
    void setWorkspaceFolder(const QString& folder);
    bool shellEnabled() const { return shellEnabled_; }
    void setShellEnabled(bool on);
    QVariantList serverList() const;
    QString loginPath() const { return loginPath_; }

    Policy policy(const QString& tool) const;
    Q_INVOKABLE QString policyName(const QString& tool) const;
    // The MCP server that offers `tool` now; "" for a built-in tool or one
    // no enabled server offers.
    Q_INVOKABLE QString serverOf(const QString& tool) const;
    Q_INVOKABLE void setPolicy(const QString& tool, const QString& policy);
    // Whether a call of `tool` must wait for the user's Approve (policy ask,
    // or a tool that asks on every run).
    bool needsApproval(const QString& tool) const;
    bool isAvailable(const QString& tool) const;

    // The tools offered to the model, in OpenAI's shape ({"type": "function",
    // "function": {name, description, parameters}}): every available tool
    // whose policy is not "never".
    QJsonArray openAiTools() const;
    // The same list as JSON text, each schema's properties in the tool's own
    // order (a QJsonObject would sort them): what the prompt and a forced
    // call's schema are written from.
    QByteArray openAiToolsText() const;
    QJsonObject schemaOf(const QString& tool) const;

    // Checks the arguments against the tool's schema and runs it; `done` is
    // called once, on `context`'s thread (not if context is gone). `context`
    // lives on the calling thread.
    void call(const QString& tool, const QString& argumentsJson, QObject* context, Callback done);

    // MCP servers. `commandLine` is split like a shell would (quotes kept
    // together); an http:// or https:// URL is a streamable HTTP server.
    Q_INVOKABLE QString addServer(const QString& name, const QString& commandLine);
    Q_INVOKABLE void removeServer(const QString& name);
    Q_INVOKABLE void setServerEnabled(const QString& name, bool enabled);
    Q_INVOKABLE QString serverLog(const QString& name) const;
    // Starts the enabled servers (after the login PATH is known).
    Q_INVOKABLE void startServers();
    // For tests: the PATH servers start with, instead of the login shell's.
    void setLoginPath(const QString& path) { loginPath_ = path; loginPathKnown_ = true; }

signals:
    void toolsChanged();
    void settingsChanged();
    void serversChanged();

private:
    struct Server {
        McpServerConfig config;
        McpClient* client = nullptr;
    };
    struct Entry {
        std::shared_ptr<const Tool> tool;  // built-in
        QString server, remoteName;        // MCP
        QString description;
        QJsonObject parameters;
        QByteArray parametersText;  // the schema in its own key order (Tool::parametersJson, McpToolInfo::inputSchemaText)
    };
    QHash<QString, Entry> entries() const;
    void save();
    void startServer(Server& server);
    Server* server(const QString& name);

    std::unique_ptr<QSettings> settings_;
    std::shared_ptr<WorkspaceFolder> workspace_;
    std::vector<std::shared_ptr<const Tool>> builtins_;
    bool shellEnabled_ = false;
    QHash<QString, Policy> policies_;
    QList<Server> servers_;
    QString loginPath_;
    bool loginPathKnown_ = false, fetchingPath_ = false;
};

} // namespace weir::desktop
