#pragma once
// Reads HTTP/1.0 and 1.1 requests from the bytes of one connection, as they
// arrive, within HttpLimits: the request line and headers (bounded in size and
// count), then a Content-Length body (bounded; too large is refused as soon as
// the head says so, before the body is read). It takes bytes up to the end of
// one request and no further, so pipelined requests stay with the caller.
//
// Refused, with the status to answer: malformed lines or headers (400), an
// unsupported version (505), a request line or head too large (414, 431),
// a body over the limit (413), a chunked body (411: send Content-Length), any
// other transfer coding (501), an Expect other than 100-continue (417).
// Ambiguous framing that proxies could read differently (Content-Length twice
// with different values, or with Transfer-Encoding) is refused, not guessed.
#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include "app/server/http_failure.h"
#include "app/server/http_limits.h"
#include "app/server/http_request.h"

namespace weir::server {

class HttpRequestReader {
public:
    enum class State { ReadingHead, ReadingBody, Complete, Failed };

    explicit HttpRequestReader(const HttpLimits& limits) : limits_(limits) {}

    // Takes bytes from `data` and returns how many it used; it stops once a
    // request is complete or has failed.
    qsizetype feed(QByteArrayView data);

    State state() const { return state_; }
    // Some byte of a request has been seen (not only the blank lines that
    // may precede one).
    bool started() const { return state_ != State::ReadingHead || !head_.isEmpty(); }
    // The head asked for "Expect: 100-continue" and the body is still to come.
    bool wantsContinue() const { return state_ == State::ReadingBody && expectContinue_; }
    // Bytes of the body received so far.
    qint64 bodyReceived() const { return request_.body.size(); }
    const HttpFailure& failure() const { return failure_; }
    // The complete request; the reader is ready for the next one.
    HttpRequest take();

private:
    bool parseHead();
    bool fail(int status, QString code, QString message);

    HttpLimits limits_;
    State state_ = State::ReadingHead;
    QByteArray head_;
    HttpRequest request_;
    qint64 bodyLength_ = 0;
    bool expectContinue_ = false;
    HttpFailure failure_;
};

} // namespace weir::server
