#include "tools/mcp/McpClient.h"

#include <QJsonArray>
#include <QJsonDocument>

#include "app/common/json_source_text.h"

namespace weir::desktop {
namespace {

constexpr qsizetype kLogKept = 64 * 1024;
constexpr int kStartTimeoutMs = 60000;  // npx may download the server first

// The text of a tools/call result: its text content blocks, one per line.
QString resultText(const QJsonObject& result) {
    QStringList parts;
    for (const QJsonValue& c : result.value(u"content").toArray()) {
        const QJsonObject block = c.toObject();
        if (block.value(u"type").toString() == u"text") parts << block.value(u"text").toString();
        else parts << QStringLiteral("[%1 content]").arg(block.value(u"type").toString());
    }
    if (parts.isEmpty() && result.contains(u"structuredContent"))
        parts << QString::fromUtf8(QJsonDocument(result.value(u"structuredContent").toObject()).toJson(QJsonDocument::Compact));
    return parts.join(u'\n');
}

QString errorMessage(const QJsonObject& reply) { return reply.value(u"error").toObject().value(u"message").toString(); }

// A message as JSON text: its members in JSON-RPC's usual order, its params
// in the order of `paramsText` (the text they were read from, or empty).
QByteArray messageText(const QJsonObject& message, QByteArrayView paramsText) {
    const QByteArray order = R"({"jsonrpc":0,"id":0,"method":0,"params":)" +
                             (paramsText.isEmpty() ? QByteArray("0") : paramsText.toByteArray()) +
                             R"(,"result":0,"error":0})";
    return common::orderedJson(message, order);
}

} // namespace

McpClient::McpClient(McpServerConfig config, QObject* parent) : QObject(parent), config_(std::move(config)) {}

McpClient::~McpClient() = default;

QString McpClient::stateText() const {
    switch (state_) {
    case State::Stopped: return tr("off");
    case State::Starting: return tr("starting");
    case State::Ready: return tools_.size() == 1 ? tr("ready, 1 tool") : tr("ready, %1 tools").arg(tools_.size());
    case State::Failed: return tr("failed: %1").arg(error_);
    }
    return {};
}

void McpClient::setState(State s) {
    if (s == state_) return;
    state_ = s;
    emit stateChanged();
}

void McpClient::appendLog(const QByteArray& text) {
    log_ += text;
    if (log_.size() > kLogKept) log_ = log_.right(kLogKept);
    emit logChanged();
}

void McpClient::start(const QString& path) {
    if (state_ == State::Starting || state_ == State::Ready) return;
    error_.clear();
    tools_.clear();
    setState(State::Starting);
    if (!openTransport(path)) return;
    QJsonObject params{{"protocolVersion", "2025-06-18"},
                       {"capabilities", QJsonObject{}},
                       {"clientInfo", QJsonObject{{"name", "weir"}, {"version", WEIR_VERSION}}}};
    request(QStringLiteral("initialize"), params, [this](const QJsonObject& reply, QByteArrayView) {
        if (reply.contains(u"error")) return fail(tr("initialize refused: %1").arg(errorMessage(reply)));
        send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
        request(QStringLiteral("tools/list"), {},
                [this](const QJsonObject& list, QByteArrayView text) { onToolsListed(list, text); });
    });
}

void McpClient::onToolsListed(const QJsonObject& list, QByteArrayView text) {
    if (list.contains(u"error")) return fail(tr("tools/list refused: %1").arg(errorMessage(list)));
    tools_.clear();
    // Each schema's key order comes from the reply's text: tool i's inputSchema there.
    const QByteArray toolsText =
        common::jsonSourceText(text, {QStringLiteral("result"), QStringLiteral("tools")}).value_or(QByteArray());
    const QJsonArray tools = list.value(u"result").toObject().value(u"tools").toArray();
    for (qsizetype i = 0; i < tools.size(); ++i) {
        const QJsonObject o = tools[i].toObject();
        const QJsonObject schema = o.value(u"inputSchema").toObject();
        const QByteArray schemaSource = common::jsonSourceText(common::jsonItemText(toolsText, i).value_or(QByteArray()),
                                                               {QStringLiteral("inputSchema")})
                                            .value_or(QByteArray());
        tools_.append({o.value(u"name").toString(), o.value(u"description").toString(), schema,
                       common::orderedJson(schema, schemaSource)});
    }
    setState(State::Ready);
}

void McpClient::stop() {
    const bool running = state_ == State::Starting || state_ == State::Ready;
    setState(State::Stopped);
    if (running) closeTransport();
    auto pending = std::exchange(pending_, {});
    qDeleteAll(std::exchange(deadlines_, {}));
    for (auto& done : pending) done({{"error", QJsonObject{{"message", tr("the server was stopped")}}}}, {});
}

void McpClient::fail(const QString& why) {
    if (state_ == State::Failed || state_ == State::Stopped) return;
    error_ = why;
    setState(State::Failed);
    closeTransport();
    auto pending = std::exchange(pending_, {});
    qDeleteAll(std::exchange(deadlines_, {}));
    for (auto& done : pending) done({{"error", QJsonObject{{"message", why}}}}, {});
}

qint64 McpClient::request(const QString& method, const QJsonObject& params, ReplyHandler onReply,
                          QByteArrayView paramsText) {
    const qint64 id = nextId_++;
    pending_.insert(id, std::move(onReply));
    auto* timer = new QTimer(this);
    timer->setSingleShot(true);
    connect(timer, &QTimer::timeout, this, [this, id, method] {
        if (QTimer* t = deadlines_.take(id)) t->deleteLater();
        auto done = pending_.take(id);
        if (!done) return;
        if (state_ == State::Starting) return fail(tr("no answer to %1 in time").arg(method));
        done({{"error", QJsonObject{{"message", tr("no answer to %1 in time").arg(method)}}}}, {});
    });
    timer->start(kStartTimeoutMs);
    deadlines_.insert(id, timer);
    QJsonObject message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.isEmpty()) message.insert(QStringLiteral("params"), params);
    send(message, paramsText);
    return id;
}

void McpClient::send(const QJsonObject& message, QByteArrayView paramsText) {
    sendMessage(message, messageText(message, paramsText));
}

void McpClient::callTool(const QString& name, const QJsonObject& arguments, QByteArrayView argumentsText,
                         Callback done, int timeoutMs) {
    if (state_ != State::Ready) {
        done({false, tr("the MCP server %1 is not running (%2)").arg(config_.name, stateText())});
        return;
    }
    const QByteArray paramsText = R"({"name":0,"arguments":)" +
                                  (argumentsText.isEmpty() ? QByteArray("0") : argumentsText.toByteArray()) + '}';
    const qint64 id = request(
        QStringLiteral("tools/call"), {{"name", name}, {"arguments", arguments}},
        [done](const QJsonObject& reply, QByteArrayView) {
            if (reply.contains(u"error")) return done({false, errorMessage(reply)});
            const QJsonObject result = reply.value(u"result").toObject();
            done({!result.value(u"isError").toBool(), resultText(result)});
        },
        paramsText);
    if (QTimer* t = deadlines_.value(id)) t->start(timeoutMs);
}

void McpClient::onMessage(const QJsonObject& message, QByteArrayView text) {
    if (message.contains(u"method")) {
        // A request from the server (ping, roots/list...): answer what we can.
        if (!message.contains(u"id")) return;  // a notification
        if (message.value(u"method").toString() == u"ping")
            send({{"jsonrpc", "2.0"}, {"id", message.value(u"id")}, {"result", QJsonObject{}}});
        else
            send({{"jsonrpc", "2.0"}, {"id", message.value(u"id")},
                  {"error", QJsonObject{{"code", -32601}, {"message", "method not supported by Weir"}}}});
        return;
    }
    const qint64 id = message.value(u"id").toInteger(-1);
    if (QTimer* t = deadlines_.take(id)) t->deleteLater();
    auto done = pending_.take(id);
    if (done) done(message, text);
}

} // namespace weir::desktop
