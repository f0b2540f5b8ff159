#include "app/server/http_connection.h"

#include <QTcpSocket>
#include <algorithm>
#include <atomic>
#include <limits>
#include <sys/socket.h>

#include "app/server/http_response.h"

namespace weir::server {

namespace {
std::atomic<quint64> nextConnectionId{1};

// While an answer is owed, Qt keeps at most this much of what the client
// sends next; then the kernel's window makes the client wait.
constexpr qint64 kReadBufferBytes = 64 * 1024;
} // namespace

HttpConnection::HttpConnection(QTcpSocket* socket, const HttpLimits& limits, HttpErrorFormatter formatError,
                               QObject* parent)
    : QObject(parent), socket_(socket), limits_(limits),
      formatError_(formatError ? std::move(formatError) : HttpErrorFormatter(plainErrorBody)), reader_(limits),
      timer_(this), id_(nextConnectionId++) {
    socket_->setParent(this);
    socket_->setReadBufferSize(kReadBufferBytes);
    timer_.setSingleShot(true);
    connect(&timer_, &QTimer::timeout, this, &HttpConnection::onTimeout);
    connect(socket_, &QTcpSocket::readyRead, this, &HttpConnection::onReadyRead);
    connect(socket_, &QTcpSocket::disconnected, this, &HttpConnection::onDisconnected);
    connect(socket_, &QTcpSocket::bytesWritten, this, [this] {
        if (phase_ == Phase::Closing && !sendingShut_ && socket_->bytesToWrite() == 0) shutDownSending();
    });
    // The first request's head is due within headerTimeoutMs of the accept.
    timer_.start(limits_.headerTimeoutMs);
    headTimerArmed_ = true;
    if (socket_->bytesAvailable() > 0) QMetaObject::invokeMethod(this, &HttpConnection::onReadyRead, Qt::QueuedConnection);
}

HttpConnection::~HttpConnection() = default;

bool HttpConnection::owesAnswer() const {
    return (phase_ == Phase::Answering || phase_ == Phase::Streaming) &&
           socket_->state() == QAbstractSocket::ConnectedState;
}

void HttpConnection::write(const QByteArray& bytes) {
    if (bytes.isEmpty() || socket_->state() != QAbstractSocket::ConnectedState || sendingShut_) return;
    socket_->write(bytes);
}

// ---------------------------------------------------------------- reading

void HttpConnection::onReadyRead() {
    if (phase_ == Phase::Closing || phase_ == Phase::Closed) {
        socket_->readAll();  // lingering: drop whatever still comes
        return;
    }
    if (phase_ != Phase::Reading) return;  // one request at a time: the rest waits in the socket
    inbox_ += socket_->readAll();
    process();
}

void HttpConnection::process() {
    while (phase_ == Phase::Reading && !inbox_.isEmpty()) {
        const bool wasStarted = reader_.started();
        const auto before = reader_.state();
        const qsizetype used = reader_.feed(inbox_);
        inbox_.remove(0, used);
        switch (reader_.state()) {
        case HttpRequestReader::State::Failed:
            respondFailure(reader_.failure(), true);
            return;
        case HttpRequestReader::State::Complete:
            deliver();
            continue;
        case HttpRequestReader::State::ReadingHead:
            // A kept-alive connection's next head is due within
            // headerTimeoutMs of its first byte, however slowly it trickles.
            if (!wasStarted && reader_.started() && !headTimerArmed_) {
                armReadTimer(limits_.headerTimeoutMs, ReadDeadline::Head);
                headTimerArmed_ = true;
            }
            break;
        case HttpRequestReader::State::ReadingBody:
            if (before != HttpRequestReader::State::ReadingBody) bodyClock_.start();
            if (reader_.wantsContinue() && !continueSent_) {
                continueSent_ = true;
                write(QByteArrayLiteral("HTTP/1.1 100 Continue\r\n\r\n"));
            }
            if (before != HttpRequestReader::State::ReadingBody || used > 0) {
                // The next read is due within the pause allowed, and the body
                // as a whole by what the bytes so far have bought.
                const qint64 left = bodyAllowedMs() - bodyClock_.elapsed();
                if (left <= 0) {
                    readDeadline_ = ReadDeadline::BodyRate;
                    return onTimeout();
                }
                if (left < limits_.bodyTimeoutMs) armReadTimer(left, ReadDeadline::BodyRate);
                else armReadTimer(limits_.bodyTimeoutMs, ReadDeadline::Pause);
            }
            break;
        }
    }
}

void HttpConnection::deliver() {
    HttpRequest request = reader_.take();
    timer_.stop();
    headTimerArmed_ = false;
    continueSent_ = false;
    ++served_;
    phase_ = Phase::Answering;
    keepAlive_ = request.keepAlive() && !closeAfterAnswer_ && served_ < limits_.maxRequestsPerConnection;
    headOnly_ = request.method == "HEAD";
    chunked_ = request.minorVersion >= 1;
    answerHeaders_.clear();
    answer_ = AnsweredRequest{request.method, request.path};
    answerClock_.start();
    emit requestReceived(this, request);
}

// ---------------------------------------------------------------- answering

HttpHeaders HttpConnection::framing(HttpHeaders headers, bool streamed) const {
    headers.insert(headers.end(), answerHeaders_.begin(), answerHeaders_.end());
    if (!keepAlive_) headers.emplace_back(QByteArrayLiteral("Connection"), QByteArrayLiteral("close"));
    else if (!chunked_) headers.emplace_back(QByteArrayLiteral("Connection"), QByteArrayLiteral("keep-alive"));
    if (streamed && chunked_) headers.emplace_back(QByteArrayLiteral("Transfer-Encoding"), QByteArrayLiteral("chunked"));
    return headers;
}

void HttpConnection::respond(int status, HttpHeaders headers, const QByteArray& body) {
    if (phase_ != Phase::Answering) return;
    answer_.status = status;
    // 204 and 304 have no body, and so no length (RFC 9110).
    if (status != 204 && status != 304)
        headers.emplace_back(QByteArrayLiteral("Content-Length"), QByteArray::number(body.size()));
    write(responseHead(status, framing(std::move(headers), false)));
    if (!headOnly_) write(body);
    answerDone();
}

void HttpConnection::respondFailure(const HttpFailure& failure, bool close, HttpHeaders extra) {
    if (phase_ == Phase::Reading) {
        // The reader's own refusal or a timeout: nothing was handed out.
        phase_ = Phase::Answering;
        headOnly_ = false;
        chunked_ = true;
        answer_ = AnsweredRequest{};
        answerClock_.start();
    }
    if (close) keepAlive_ = false;
    const HttpErrorBody e = formatError_(failure);
    extra.emplace_back(QByteArrayLiteral("Content-Type"), e.contentType);
    respond(failure.status, std::move(extra), e.body);
}

void HttpConnection::setAnswerHeaders(HttpHeaders headers) { answerHeaders_ = std::move(headers); }

void HttpConnection::beginStream(int status, HttpHeaders headers) {
    if (phase_ != Phase::Answering) return;
    // HTTP/1.0 has no chunks: the end of the connection ends the stream.
    if (!chunked_) keepAlive_ = false;
    phase_ = Phase::Streaming;
    answer_.status = status;
    write(responseHead(status, framing(std::move(headers), true)));
}

void HttpConnection::streamData(const QByteArray& data) {
    if (phase_ != Phase::Streaming || headOnly_) return;
    write(chunked_ ? chunk(data) : data);
}

void HttpConnection::endStream() {
    if (phase_ != Phase::Streaming) return;
    if (chunked_ && !headOnly_) write(lastChunk());
    answerDone();
}

void HttpConnection::answerDone() {
    answer_.ms = double(answerClock_.nsecsElapsed()) / 1e6;
    logAnsweredRequest(answer_);
    if (!keepAlive_ || closeAfterAnswer_) return startClosing();
    phase_ = Phase::Reading;
    timer_.start(limits_.idleTimeoutMs);
    // What the client sent meanwhile (a pipelined request) is read on the
    // next turn, not from inside the caller's handler.
    QMetaObject::invokeMethod(this, [this] {
        process();
        if (phase_ == Phase::Reading) onReadyRead();
    }, Qt::QueuedConnection);
}

void HttpConnection::armReadTimer(qint64 ms, ReadDeadline deadline) {
    if (!requestDue_.isForever() && requestDue_.remainingTime() <= ms) {
        ms = requestDue_.remainingTime();
        deadline = ReadDeadline::Reserve;
    }
    readDeadline_ = deadline;
    timer_.start(int(std::clamp<qint64>(ms, 0, std::numeric_limits<int>::max())));
}

qint64 HttpConnection::bodyAllowedMs() const {
    const qint64 bought = reader_.bodyReceived() * 1000 / std::max<qint64>(1, limits_.bodyMinBytesPerSecond);
    return std::min<qint64>(limits_.bodyDeadlineMs, limits_.bodyGraceMs + bought);
}

void HttpConnection::holdToPromptRequest(int ms) {
    closeAfterAnswer_ = true;
    requestDue_.setRemainingTime(ms);
    if (phase_ == Phase::Reading) armReadTimer(ms, ReadDeadline::Reserve);
}

void HttpConnection::onTimeout() {
    switch (phase_) {
    case Phase::Reading: {
        if (!reader_.started()) return startClosing();  // idle, or connected and silent: close without a word
        QString why = QStringLiteral("The request was not received in time.");
        if (readDeadline_ == ReadDeadline::Reserve)
            why = QStringLiteral("The request was not received in time (the server is at its connection limit, "
                                 "so a request must arrive whole within %1 ms).")
                      .arg(limits_.reservedRequestMs);
        else if (readDeadline_ == ReadDeadline::BodyRate)
            why = QStringLiteral("The request body arrived too slowly: after the first %1 s it must come at %2 "
                                 "bytes a second or more, and whole within %3 s.")
                      .arg(limits_.bodyGraceMs / 1000.0)
                      .arg(limits_.bodyMinBytesPerSecond)
                      .arg(limits_.bodyDeadlineMs / 1000.0);
        return respondFailure(HttpFailure{408, QStringLiteral("request_timeout"), why}, true);
    }
    case Phase::Closing: return finish();
    default: return;
    }
}

// ---------------------------------------------------------------- closing

void HttpConnection::closeWhenDone() {
    closeAfterAnswer_ = true;
    keepAlive_ = false;
    if (phase_ == Phase::Reading) startClosing();
}

void HttpConnection::startClosing() {
    if (phase_ == Phase::Closing || phase_ == Phase::Closed) return;
    phase_ = Phase::Closing;
    timer_.stop();
    socket_->flush();
    if (socket_->bytesToWrite() == 0) shutDownSending();
    else timer_.start(limits_.bodyTimeoutMs);  // a client that never reads is not waited for forever
}

void HttpConnection::shutDownSending() {
    if (sendingShut_) return;
    sendingShut_ = true;
    if (socket_->state() != QAbstractSocket::ConnectedState) return finish();
    ::shutdown(int(socket_->socketDescriptor()), SHUT_WR);
    socket_->readAll();
    timer_.start(limits_.lingerMs);  // the client's close ends it sooner (onDisconnected)
}

void HttpConnection::flushAndClose(QDeadlineTimer deadline) {
    if (phase_ == Phase::Closed) return;
    phase_ = Phase::Closing;
    timer_.stop();
    while (socket_->state() == QAbstractSocket::ConnectedState && socket_->bytesToWrite() > 0 && !deadline.hasExpired())
        if (!socket_->waitForBytesWritten(int(std::max<qint64>(1, deadline.remainingTime())))) break;
    if (socket_->state() == QAbstractSocket::ConnectedState && socket_->bytesToWrite() == 0)
        ::shutdown(int(socket_->socketDescriptor()), SHUT_WR);
    finish();
}

void HttpConnection::refuse(const HttpFailure& failure, HttpHeaders extra) {
    closeAfterAnswer_ = true;
    respondFailure(failure, true, std::move(extra));
}

void HttpConnection::onDisconnected() {
    const bool owed = phase_ == Phase::Answering || phase_ == Phase::Streaming;
    if (owed) {
        answer_.status = 499;  // the client closed the request (nginx's code)
        answer_.ms = double(answerClock_.nsecsElapsed()) / 1e6;
        logAnsweredRequest(answer_);
        phase_ = Phase::Closing;  // nobody to answer any more
        emit clientGone(this);
    }
    finish();
}

void HttpConnection::finish() {
    if (phase_ == Phase::Closed) return;
    phase_ = Phase::Closed;
    timer_.stop();
    socket_->abort();
    emit closed(this);
    deleteLater();
}

} // namespace weir::server
