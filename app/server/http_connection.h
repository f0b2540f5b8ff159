#pragma once
// One client connection of the HTTP server: reads requests one at a time
// (HttpRequestReader), hands each out with requestReceived, and writes its
// answer, whole (respond) or streamed (beginStream/streamData/endStream:
// chunked on HTTP/1.1, closed at the end on HTTP/1.0). Then it waits for the
// next request on the same connection (keep-alive) or closes, as the request
// and the limits say.
//
// Timeouts (HttpLimits): a request head must arrive within headerTimeoutMs, a
// body may pause at most bodyTimeoutMs between reads and must keep up
// bodyMinBytesPerSecond after bodyGraceMs and end within bodyDeadlineMs (all
// answered 408), an idle kept-alive connection is closed after idleTimeoutMs.
// A connection in the server's reserve (holdToPromptRequest) has its whole
// request due at once and is closed after one answer. While an answer
// is owed nothing more is read, so a client cannot queue requests behind it.
// Closing is graceful: what is written goes out, the sending side is shut,
// and what the client still sends is read and dropped for lingerMs, so the
// answer is not lost to a TCP reset.
//
// The object deletes itself (deleteLater) once its socket is closed; hold it
// in a QPointer across event-loop turns.
#include <QByteArray>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include "app/server/http_failure.h"
#include "app/server/http_limits.h"
#include "app/server/http_request.h"
#include "app/server/http_request_reader.h"
#include "app/server/request_log.h"

class QTcpSocket;

namespace weir::server {

class HttpConnection : public QObject {
    Q_OBJECT
public:
    // Takes ownership of `socket` (connected).
    HttpConnection(QTcpSocket* socket, const HttpLimits& limits, HttpErrorFormatter formatError,
                   QObject* parent = nullptr);
    ~HttpConnection() override;

    quint64 id() const { return id_; }

    // The answer to the request last handed out, in one piece. Adds
    // Content-Length and, when the connection ends after it, "Connection: close".
    void respond(int status, HttpHeaders headers, const QByteArray& body);
    // An error answer with the installed formatter's body; `close` ends the
    // connection after it.
    void respondFailure(const HttpFailure& failure, bool close = false, HttpHeaders extra = {});
    // Headers every answer to the request last handed out carries, whichever
    // way it is answered (CORS headers for an allowed origin).
    void setAnswerHeaders(HttpHeaders headers);
    // A streamed answer: the head now, data as it comes, then the end.
    void beginStream(int status, HttpHeaders headers);
    void streamData(const QByteArray& data);
    void endStream();

    // An answer is owed (handed out, not yet complete) and the client is still there.
    bool owesAnswer() const;
    bool streaming() const { return phase_ == Phase::Streaming; }
    bool isClosed() const { return phase_ == Phase::Closed; }

    // No further requests: closes once the answer in progress is complete,
    // at once when there is none.
    void closeWhenDone();
    // Shutdown: sends what is queued (waiting at most until `deadline`) and closes.
    void flushAndClose(QDeadlineTimer deadline);
    // Over the connection limit: the failure as the whole answer, then closed.
    void refuse(const HttpFailure& failure, HttpHeaders extra);
    // In the reserve beyond the connection limit: the whole request is due
    // within `ms` of now (else 408), and the connection closes after its answer.
    void holdToPromptRequest(int ms);
    // The completion tokens the answer in progress carries, for its log line.
    void setAnswerTokens(qint64 tokens) { answer_.tokens = tokens; }

signals:
    void requestReceived(weir::server::HttpConnection* connection, const weir::server::HttpRequest& request);
    // The client went away while an answer was owed (its work can stop).
    void clientGone(weir::server::HttpConnection* connection);
    // The socket is closed; the object is deleted on the next event-loop turn.
    void closed(weir::server::HttpConnection* connection);

private:
    enum class Phase {
        Reading,    // receiving a request (or idle between requests)
        Answering,  // a request is out; its answer not yet begun
        Streaming,  // a streamed answer is in progress
        Closing,    // written what there was to write; lingering, then closed
        Closed,
    };

    void onReadyRead();
    void process();
    void deliver();
    void answerDone();
    void onTimeout();
    // What the read timer stands for when it fires (its 408 says which).
    enum class ReadDeadline { Head, Pause, BodyRate, Reserve };
    void armReadTimer(qint64 ms, ReadDeadline deadline);  // at most until the reserve's deadline
    qint64 bodyAllowedMs() const;      // how long the body may take, by what has come
    void onDisconnected();
    void startClosing();
    void shutDownSending();
    void finish();
    void write(const QByteArray& bytes);
    HttpHeaders framing(HttpHeaders headers, bool streamed) const;

    QTcpSocket* socket_;
    HttpLimits limits_;
    HttpErrorFormatter formatError_;
    HttpRequestReader reader_;
    QByteArray inbox_;          // read from the socket, not yet taken by the reader
    HttpHeaders answerHeaders_; // added to the answer of the request being answered
    QTimer timer_;
    Phase phase_ = Phase::Reading;
    quint64 id_;
    int served_ = 0;            // requests handed out on this connection
    bool headTimerArmed_ = false;
    bool continueSent_ = false;
    bool keepAlive_ = true;     // of the request being answered
    bool headOnly_ = false;     // HEAD: the head of the answer without its body
    bool chunked_ = false;      // the stream in progress uses chunked framing
    bool closeAfterAnswer_ = false;
    bool sendingShut_ = false;
    QElapsedTimer bodyClock_;   // since the body being read began
    QDeadlineTimer requestDue_{QDeadlineTimer::Forever};  // a reserve connection's deadline
    ReadDeadline readDeadline_ = ReadDeadline::Head;
    AnsweredRequest answer_;    // the access-log line of the answer in progress
    QElapsedTimer answerClock_;
};

} // namespace weir::server
