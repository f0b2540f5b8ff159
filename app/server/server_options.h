#pragma once
// How an ApiServer listens and what it lets clients do.
#include <QString>
#include <QStringList>

#include "app/server/http_limits.h"

namespace weir::server {

inline constexpr quint16 kDefaultPort = 8719;

struct ServerOptions {
    QString host = QStringLiteral("127.0.0.1");  // "0.0.0.0" / "::" / an address: every or one interface
    quint16 port = kDefaultPort;                  // 0: any free port (see ApiServer::port())
    QString apiKey;                               // non-empty: every /v1 request needs "Authorization: Bearer KEY"
    QString modelId;                              // empty: the model file's name without ".gguf"
    qint64 defaultMaxTokens = 0;                  // chat without max_tokens: 0 = until the context ends
    // Without an API key, Host names (besides IP addresses, localhost and
    // `host`) that clients may address the server by; "*" allows any.
    QStringList allowedHosts;
    // Web page origins ("https://app.example.com", "*": any) that may call the
    // endpoint from a browser (CORS); none by default. See cors_policy.h.
    QStringList corsOrigins;
    // Sizes, timeouts and the connection cap (maxBodyBytes: larger bodies
    // get 413; retryAfterSeconds: the Retry-After of every 503).
    HttpLimits http;
    int prepareThreads = 2;                       // worker threads that parse, render and tokenize requests
};

} // namespace weir::server
