#include "tools/mcp/McpHttpClient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkReply>
#include <QNetworkRequest>

#include "app/common/json_source_text.h"

namespace weir::desktop {
namespace {

struct Received {
    QJsonObject message;
    QByteArray text;  // what it was read from
};

// The JSON-RPC messages in a body: one object, a batch (array), or the data
// of each server-sent event.
QList<Received> messagesIn(const QByteArray& body, bool eventStream) {
    QList<Received> out;
    auto take = [&out](const QByteArray& json) {
        const QJsonDocument doc = QJsonDocument::fromJson(json);
        if (doc.isObject()) out.append({doc.object(), json});
        const QJsonArray batch = doc.array();
        for (qsizetype i = 0; i < batch.size(); ++i)
            out.append({batch[i].toObject(), common::jsonItemText(json, i).value_or(QByteArray())});
    };
    if (!eventStream) {
        take(body);
        return out;
    }
    QByteArray data;
    for (const QByteArray& raw : body.split('\n')) {
        const QByteArray line = raw.endsWith('\r') ? raw.chopped(1) : raw;
        if (line.isEmpty()) {
            if (!data.isEmpty()) take(data);
            data.clear();
        } else if (line.startsWith("data:")) {
            if (!data.isEmpty()) data += '\n';
            data += line.mid(5).trimmed();
        }
    }
    if (!data.isEmpty()) take(data);
    return out;
}

} // namespace

McpHttpClient::McpHttpClient(McpServerConfig config, QObject* parent) : McpClient(std::move(config), parent) {}

McpHttpClient::~McpHttpClient() {
    for (QNetworkReply* r : std::exchange(inFlight_, {})) {
        r->disconnect(this);
        r->abort();
        r->deleteLater();
    }
}

bool McpHttpClient::openTransport(const QString&) {
    url_ = QUrl(config().url);
    sessionId_.clear();
    if (!url_.isValid() || (url_.scheme() != u"http" && url_.scheme() != u"https"))
        return fail(tr("'%1' is not an http:// or https:// URL").arg(config().url)), false;
    return true;
}

void McpHttpClient::sendMessage(const QJsonObject& message, const QByteArray& text) {
    QNetworkRequest request(url_);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setRawHeader("Accept", "application/json, text/event-stream");
    if (!sessionId_.isEmpty()) request.setRawHeader("Mcp-Session-Id", sessionId_);
    if (message.value(u"method").toString() != u"initialize") request.setRawHeader("MCP-Protocol-Version", "2025-06-18");
    QNetworkReply* reply = net_.post(request, text);
    inFlight_.insert(reply);
    const bool expectsAnswer = message.contains(u"id") && message.contains(u"method");
    connect(reply, &QNetworkReply::finished, this, [this, reply, expectsAnswer] { onFinished(reply, expectsAnswer); });
}

void McpHttpClient::onFinished(QNetworkReply* reply, bool expectsAnswer) {
    inFlight_.remove(reply);
    reply->deleteLater();
    if (state_ == State::Stopped || state_ == State::Failed) return;
    const QByteArray session = reply->rawHeader("Mcp-Session-Id");
    if (!session.isEmpty()) sessionId_ = session;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray body = reply->readAll();
    if (reply->error() != QNetworkReply::NoError && status == 0)
        return fail(tr("cannot reach %1: %2").arg(url_.toString(), reply->errorString()));
    if (status >= 400) {
        appendLog(QStringLiteral("HTTP %1 from %2: %3\n").arg(status).arg(url_.toString(), QString::fromUtf8(body.left(500))).toUtf8());
        if (expectsAnswer) return fail(tr("the server answered HTTP %1").arg(status));
        return;
    }
    const bool eventStream = reply->header(QNetworkRequest::ContentTypeHeader).toString().startsWith(u"text/event-stream");
    for (const Received& m : messagesIn(body, eventStream)) onMessage(m.message, m.text);
}

void McpHttpClient::closeTransport() {
    for (QNetworkReply* r : std::exchange(inFlight_, {})) {
        r->disconnect(this);
        r->abort();
        r->deleteLater();
    }
    if (sessionId_.isEmpty()) return;
    // Ends the session on the server; nobody waits for the answer.
    QNetworkRequest request(url_);
    request.setRawHeader("Mcp-Session-Id", sessionId_);
    QNetworkReply* bye = net_.deleteResource(request);
    connect(bye, &QNetworkReply::finished, bye, &QObject::deleteLater);
    sessionId_.clear();
}

} // namespace weir::desktop
