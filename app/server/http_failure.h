#pragma once
// Why the HTTP layer answers a request itself (malformed, too large, too slow,
// too many connections), and how such an answer's body is written: the
// endpoint installs a formatter so that these come out in OpenAI's error JSON
// like every other error.
#include <QByteArray>
#include <QString>
#include <functional>

namespace weir::server {

struct HttpFailure {
    int status = 400;
    QString code;      // machine-readable, e.g. "request_too_large"
    QString message;   // for the client: what was wrong, in words
};

struct HttpErrorBody {
    QByteArray contentType;
    QByteArray body;
};

using HttpErrorFormatter = std::function<HttpErrorBody(const HttpFailure&)>;

// text/plain: the message and a newline.
inline HttpErrorBody plainErrorBody(const HttpFailure& f) {
    return {QByteArrayLiteral("text/plain; charset=utf-8"), f.message.toUtf8() + '\n'};
}

} // namespace weir::server
