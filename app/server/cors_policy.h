#pragma once
// Which web pages may call the endpoint from a browser (CORS). None by
// default: a page's scripts can then neither read an answer nor send JSON
// (the browser's preflight finds no Access-Control-Allow-Origin). Origins the
// user lists (--cors-origins, the app's endpoint card), or "*" for any, get
// their preflight (OPTIONS) answered without authentication, as browsers
// never send a key on it, and Access-Control-* headers on every answer.
// The API key, where set, still decides every request but the preflight.
// How origins are written and compared: cors_origin.h.
#include <QByteArray>
#include <QString>
#include <QStringList>

#include "app/server/http_request.h"

namespace weir::server {

class CorsPolicy {
public:
    explicit CorsPolicy(const QStringList& origins);

    bool allows(const QByteArray& origin) const;
    // For every answer to a request with this Origin: nothing unless allowed.
    HttpHeaders answerHeaders(const QByteArray& origin) const;
    // An allowed origin's preflight, besides answerHeaders: methods, the
    // headers it asked for, how long the browser may remember the answer.
    HttpHeaders preflightHeaders(const HttpRequest& request) const;

    static constexpr int kMaxAgeSeconds = 600;

private:
    QStringList origins_;  // normalized
    bool any_ = false;
};

} // namespace weir::server
