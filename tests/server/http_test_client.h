#pragma once
// A small blocking HTTP client for tests of Weir's endpoint: sends a request
// with QNetworkAccessManager, waits in a local event loop (the server may run
// on this thread), and returns status, body and headers.
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

namespace weir::test::http {

struct Reply {
    int status = 0;
    QByteArray body;
    QNetworkReply::NetworkError error = QNetworkReply::NoError;
    QByteArray header(const char* name) const { return headers.value(QByteArray(name).toLower()); }
    QMap<QByteArray, QByteArray> headers;
};

inline Reply send(QNetworkAccessManager& nam, const QString& url, const QByteArray& method, const QByteArray& body = {},
                  const QByteArray& auth = {}) {
    QNetworkRequest req{QUrl(url)};
    req.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    if (!auth.isEmpty()) req.setRawHeader("Authorization", auth);
    QNetworkReply* r = nam.sendCustomRequest(req, method, body);
    QEventLoop loop;
    QObject::connect(r, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    Reply out;
    out.status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    out.body = r->readAll();
    out.error = r->error();
    for (const auto& [k, v] : r->rawHeaderPairs()) out.headers.insert(k.toLower(), v);
    r->deleteLater();
    return out;
}

inline QJsonObject obj(const QByteArray& b) { return QJsonDocument::fromJson(b).object(); }

inline QByteArray chatBody(int maxTokens, bool stream, const QString& model = QStringLiteral("tiny")) {
    QJsonObject o{{"model", model},
                  {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "hello world status"}}}},
                  {"max_tokens", maxTokens},
                  {"temperature", 0},
                  {"stream", stream}};
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}


} // namespace weir::test::http
