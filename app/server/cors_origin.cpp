#include "app/server/cors_origin.h"

#include <QUrl>

namespace weir::server {

QString normalizedCorsOrigin(const QString& origin) {
    QString o = origin.trimmed().toLower();
    while (o.endsWith(QLatin1Char('/'))) o.chop(1);
    return o;
}

std::optional<QString> invalidCorsOrigin(const QString& origin) {
    const QString o = normalizedCorsOrigin(origin);
    if (o == QLatin1String("*")) return std::nullopt;
    const QUrl url(o, QUrl::StrictMode);
    const bool web = url.scheme() == QLatin1String("http") || url.scheme() == QLatin1String("https");
    if (!url.isValid() || !web || url.host().isEmpty() || !url.path().isEmpty() || url.hasQuery() ||
        url.hasFragment() || !url.userInfo().isEmpty())
        return QStringLiteral("'%1' is not an origin: expected scheme://host[:port] (http or https, no path) or '*'")
            .arg(origin.left(200));
    return std::nullopt;
}

} // namespace weir::server
