#pragma once
// Plain values of the MCP client: a server the user configured, and a tool
// one of them offers.
#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace weir::desktop {

struct McpServerConfig {
    QString name;           // the user's name for it; prefixes its tools in the UI
    QString command;        // stdio: the program (found on the login PATH), e.g. "npx"
    QStringList arguments;
    QString url;            // streamable HTTP: the endpoint (then command is unused)
    bool enabled = true;
};

struct McpToolInfo {
    QString name;
    QString description;
    QJsonObject inputSchema;
    // The same schema as compact JSON text with its keys in the order the
    // server wrote them (a QJsonObject sorts them): the order its properties
    // are offered to the model in, and a forced call writes them in.
    QByteArray inputSchemaText;
};

} // namespace weir::desktop
