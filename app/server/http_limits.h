#pragma once
// What one HTTP client may cost the server: sizes of what it sends, how long
// it may take to send it, how long an idle connection is kept, and how many
// connections are served at once. The defaults follow nginx's spirit
// (bounded headers, read timeouts, a keep-alive timeout) with tighter numbers,
// since this server sits on a desktop, not behind a load balancer.
#include <QtGlobal>

namespace weir::server {

struct HttpLimits {
    qint64 maxRequestLineBytes = 8 * 1024;   // longer: 414
    qint64 maxHeadBytes = 64 * 1024;         // request line + headers; more: 431
    int maxHeaderCount = 100;                // more: 431
    qint64 maxBodyBytes = 8 * 1024 * 1024;   // Content-Length above it: 413 before reading the body

    // A request's head must arrive within this time of its first byte (or of
    // the connection being accepted): a client trickling bytes is cut off.
    int headerTimeoutMs = 15000;
    // While a body is being received, at most this long between two reads.
    int bodyTimeoutMs = 30000;
    // A kept-alive connection with no request in progress is closed after this.
    int idleTimeoutMs = 15000;
    // After the server closes its side, what the client still sends is read
    // and dropped for this long, so that the answer is not lost to a reset.
    int lingerMs = 2000;

    int maxConnections = 256;                // beyond it: 503 with Retry-After, then closed
    int maxRequestsPerConnection = 1000;     // then the answer says "Connection: close"
    int retryAfterSeconds = 2;               // Retry-After of the server's own 503s
};

} // namespace weir::server
