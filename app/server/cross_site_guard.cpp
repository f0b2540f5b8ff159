#include "app/server/cross_site_guard.h"

#include <QHostAddress>

namespace weir::server {

CrossSiteGuard::CrossSiteGuard(QString listenHost, QStringList allowedHosts, bool apiKeySet) : apiKeySet_(apiKeySet) {
    allowedHosts.append(listenHost);
    for (const QString& h : allowedHosts) {
        const QString t = h.trimmed().toLower();
        if (t == QLatin1String("*")) anyHost_ = true;
        else if (!t.isEmpty()) allowed_.append(t);
    }
}

QString CrossSiteGuard::hostOf(const QByteArray& hostHeader) {
    QString h = QString::fromLatin1(hostHeader.trimmed()).toLower();
    if (h.startsWith(QLatin1Char('['))) {
        const qsizetype close = h.indexOf(QLatin1Char(']'));
        if (close < 0) return {};
        const QString rest = h.mid(close + 1);
        if (!rest.isEmpty() && !rest.startsWith(QLatin1Char(':'))) return {};
        return h.mid(1, close - 1);
    }
    const qsizetype colon = h.lastIndexOf(QLatin1Char(':'));
    if (colon >= 0) {
        if (h.indexOf(QLatin1Char(':')) != colon) return {};  // an IPv6 address must be in brackets
        h.truncate(colon);
    }
    if (h.endsWith(QLatin1Char('.'))) h.chop(1);  // "localhost." is "localhost"
    return h;
}

bool CrossSiteGuard::hostAllowed(const QString& host) const {
    if (anyHost_) return true;
    if (host.isEmpty()) return false;
    // An address typed as such cannot be rebound to another machine.
    if (QHostAddress a; a.setAddress(host)) return true;
    if (host == QLatin1String("localhost") || host.endsWith(QLatin1String(".localhost"))) return true;
    return allowed_.contains(host);
}

std::optional<ApiError> CrossSiteGuard::check(const HttpRequest& request) const {
    if (!apiKeySet_ && request.hasHeader("host")) {
        const QByteArray header = request.header("host");
        const QString host = hostOf(header);
        if (!hostAllowed(host)) {
            ApiError e;
            e.status = 403;
            e.type = QStringLiteral("permission_error");
            e.code = QStringLiteral("host_not_allowed");
            e.message = QStringLiteral("Requests for host '%1' are refused: without an API key this server only "
                                       "answers requests addressed to this machine (an IP address or localhost). "
                                       "Allow the name with --allowed-host, or set an API key.")
                            .arg(QString::fromLatin1(header.left(200)));
            return e;
        }
    }
    if (request.method == "POST") {
        const QByteArray type = request.header("content-type");
        const QByteArray media = type.left(type.indexOf(';') < 0 ? type.size() : type.indexOf(';')).trimmed().toLower();
        if (media != "application/json") {
            ApiError e;
            e.status = 415;
            e.code = QStringLiteral("unsupported_media_type");
            e.message = type.isEmpty()
                            ? QStringLiteral("The request has no Content-Type; send the JSON body with "
                                             "'Content-Type: application/json'.")
                            : QStringLiteral("Content-Type '%1' is not accepted; send the JSON body with "
                                             "'Content-Type: application/json'.")
                                  .arg(QString::fromLatin1(type.left(200)));
            return e;
        }
    }
    return std::nullopt;
}

} // namespace weir::server
