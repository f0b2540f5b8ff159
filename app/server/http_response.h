#pragma once
// The bytes of HTTP/1.1 responses: a status line with its reason phrase, the
// Date header, the given headers, and chunked framing for streamed bodies.
#include <QByteArray>

#include "app/server/http_request.h"

namespace weir::server {

// "Not Found" for 404; "Unknown" for codes this server never sends.
QByteArray reasonPhrase(int status);

// Status line, Date, `headers`, a blank line. Framing headers
// (Content-Length, Transfer-Encoding, Connection) come in `headers`.
QByteArray responseHead(int status, const HttpHeaders& headers);

// One chunk of a chunked body; empty data gives nothing (an empty chunk
// would end the body).
QByteArray chunk(const QByteArray& data);
// The chunk that ends a chunked body.
inline QByteArray lastChunk() { return QByteArrayLiteral("0\r\n\r\n"); }

} // namespace weir::server
