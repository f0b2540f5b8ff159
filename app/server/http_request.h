#pragma once
// One HTTP/1.x request as read off a connection: the request line, the
// headers in the order sent (names as sent; looked up case-insensitively),
// and the body (Content-Length bytes).
#include <QByteArray>
#include <QByteArrayList>
#include <QByteArrayView>
#include <QString>
#include <utility>
#include <vector>

namespace weir::server {

using HttpHeaders = std::vector<std::pair<QByteArray, QByteArray>>;

struct HttpRequest {
    QByteArray method;       // "GET", "POST", ... (case-sensitive, as HTTP says)
    QByteArray target;       // as sent: "/v1/models?x=1" or an absolute URL
    QString path;            // the target's path, percent-encoding kept ("/v1/models")
    int minorVersion = 1;    // HTTP/1.<minorVersion>
    HttpHeaders headers;
    QByteArray body;

    // The first header of that name, or an empty array.
    QByteArray header(QByteArrayView name) const {
        for (const auto& [k, v] : headers)
            if (k.compare(name, Qt::CaseInsensitive) == 0) return v;
        return {};
    }
    bool hasHeader(QByteArrayView name) const {
        for (const auto& [k, v] : headers)
            if (k.compare(name, Qt::CaseInsensitive) == 0) return true;
        return false;
    }
    // Whether the connection may carry another request after this one:
    // HTTP/1.1 unless "Connection: close", HTTP/1.0 only with "keep-alive".
    bool keepAlive() const {
        bool close = false, keep = false;
        for (const auto& [k, v] : headers) {
            if (k.compare("connection", Qt::CaseInsensitive) != 0) continue;
            for (const QByteArray& token : v.split(',')) {
                const QByteArray t = token.trimmed().toLower();
                close = close || t == "close";
                keep = keep || t == "keep-alive";
            }
        }
        if (close) return false;
        return minorVersion >= 1 || keep;
    }
};

} // namespace weir::server
