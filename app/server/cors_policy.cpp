#include "app/server/cors_policy.h"

#include "app/server/cors_origin.h"

namespace weir::server {

CorsPolicy::CorsPolicy(const QStringList& origins) {
    for (const QString& o : origins) {
        const QString n = normalizedCorsOrigin(o);
        if (n == QLatin1String("*")) any_ = true;
        else if (!n.isEmpty()) origins_.append(n);
    }
}

bool CorsPolicy::allows(const QByteArray& origin) const {
    if (origin.isEmpty()) return false;
    if (any_) return true;
    return origins_.contains(normalizedCorsOrigin(QString::fromLatin1(origin)));
}

HttpHeaders CorsPolicy::answerHeaders(const QByteArray& origin) const {
    if (!allows(origin)) return {};
    // The origin itself, not "*", so the answer also suits a page that sends
    // credentials; Vary keeps caches from serving it to another origin.
    return {{QByteArrayLiteral("Access-Control-Allow-Origin"), origin},
            {QByteArrayLiteral("Vary"), QByteArrayLiteral("Origin")}};
}

HttpHeaders CorsPolicy::preflightHeaders(const HttpRequest& request) const {
    if (!allows(request.header("origin"))) return {};
    HttpHeaders h;
    QByteArray asked = request.header("access-control-request-headers").trimmed();
    if (asked.isEmpty()) asked = QByteArrayLiteral("Authorization, Content-Type");
    h.emplace_back(QByteArrayLiteral("Access-Control-Allow-Methods"), QByteArrayLiteral("GET, POST, OPTIONS"));
    h.emplace_back(QByteArrayLiteral("Access-Control-Allow-Headers"), asked.left(4096));
    h.emplace_back(QByteArrayLiteral("Access-Control-Max-Age"), QByteArray::number(kMaxAgeSeconds));
    return h;
}

} // namespace weir::server
