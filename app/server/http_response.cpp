#include "app/server/http_response.h"

#include <QDateTime>
#include <QLocale>

namespace weir::server {

QByteArray reasonPhrase(int status) {
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}

namespace {
// IMF-fixdate (RFC 9110 5.6.7), e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
QByteArray httpDate() {
    return QLocale::c()
        .toString(QDateTime::currentDateTimeUtc(), QStringLiteral("ddd, dd MMM yyyy hh:mm:ss 'GMT'"))
        .toLatin1();
}
} // namespace

QByteArray responseHead(int status, const HttpHeaders& headers) {
    QByteArray out;
    out.reserve(256);
    out += "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    out += "Date: " + httpDate() + "\r\n";
    for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
    out += "\r\n";
    return out;
}

QByteArray chunk(const QByteArray& data) {
    if (data.isEmpty()) return {};
    return QByteArray::number(data.size(), 16) + "\r\n" + data + "\r\n";
}

} // namespace weir::server
