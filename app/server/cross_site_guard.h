#pragma once
// What keeps web pages away from a local endpoint that has no API key. A page
// in the user's browser may send "simple" cross-site requests without asking
// (a POST with a text/plain or form body, or none), and through DNS rebinding
// may even read the answers, under a name of its own that resolves to this
// machine. So, like FastAPI (vLLM's server) for the first and Jupyter for the
// second:
//   - a POST must say Content-Type: application/json (415 otherwise), which a
//     browser only sends cross-site after a CORS preflight, and this server
//     answers preflights only for the origins the user listed (CorsPolicy):
//     a listed origin may call it cross-site, any other may not;
//   - without an API key, the Host header must name this machine: an IP
//     address, "localhost" or a *.localhost name, the host the server was
//     told to listen on, or one of ServerOptions::allowedHosts (403 otherwise).
// With a key, any Host is fine: a page cannot know the key.
#include <QString>
#include <QStringList>
#include <optional>

#include "app/server/api_error.h"
#include "app/server/http_request.h"

namespace weir::server {

class CrossSiteGuard {
public:
    // `listenHost`: the host the server was told to bind (may be a name);
    // `allowedHosts`: more names clients may use ("*": any).
    CrossSiteGuard(QString listenHost, QStringList allowedHosts, bool apiKeySet);

    // The error to answer with, or nothing when the request may go on.
    std::optional<ApiError> check(const HttpRequest& request) const;

    // The host part of a Host header ("[::1]:8719" -> "::1"), lower case;
    // empty when malformed.
    static QString hostOf(const QByteArray& hostHeader);
    bool hostAllowed(const QString& host) const;

private:
    QStringList allowed_;   // lower case
    bool anyHost_ = false;
    bool apiKeySet_;
};

} // namespace weir::server
