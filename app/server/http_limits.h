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
    // And a body that drips (a byte now and then, never pausing that long)
    // is cut off too: after its first bodyGraceMs it must keep up
    // bodyMinBytesPerSecond on average (as Apache's mod_reqtimeout MinRate:
    // each byte received buys 1/rate s more), and it must be whole within
    // bodyDeadlineMs of its start however fast it comes. Both answered 408.
    int bodyGraceMs = 10000;
    qint64 bodyMinBytesPerSecond = 16 * 1024;
    int bodyDeadlineMs = 120000;
    // A kept-alive connection with no request in progress is closed after this.
    int idleTimeoutMs = 15000;
    // After the server closes its side, what the client still sends is read
    // and dropped for this long, so that the answer is not lost to a reset.
    int lingerMs = 2000;

    int maxConnections = 256;                // connections that send at their own pace
    // Beyond maxConnections, a reserve for clients that send a whole request
    // at once (health checks, ordinary API calls), so that slow clients
    // holding every connection do not lock them out: a reserve connection's
    // request must arrive whole within reservedRequestMs (else 408), and it
    // is closed after its answer. Beyond both: 503 with Retry-After, then closed.
    int reservedConnections = 32;
    int reservedRequestMs = 2000;
    int maxRequestsPerConnection = 1000;     // then the answer says "Connection: close"
    int retryAfterSeconds = 2;               // Retry-After of the server's own 503s
};

} // namespace weir::server
