#pragma once
// A stand-in OpenAI-compatible server on a loopback port for the client's
// tests: it reads each HTTP/1.1 request whole (headers and Content-Length
// body), records it, and hands the socket to the next scripted answer, which
// writes canned bytes at its own pace (chunked streams split where a test
// wants them split, error answers, or nothing at all).
#include <QByteArray>
#include <QHash>
#include <QList>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <functional>

namespace weir::test {

struct SeenRequest {
    QByteArray method, path, body;
    QHash<QByteArray, QByteArray> headers;   // names in lower case
};

class FakeOpenAiServer : public QObject {
public:
    using Answer = std::function<void(QTcpSocket*, const SeenRequest&)>;

    FakeOpenAiServer() {
        connect(&tcp_, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket* s = tcp_.nextPendingConnection()) accept(s);
        });
        tcp_.listen(QHostAddress::LocalHost, 0);
    }
    quint16 port() const { return tcp_.serverPort(); }
    QString baseUrl() const { return QStringLiteral("http://127.0.0.1:%1/v1").arg(port()); }

    // Answers in order; the last one repeats for any further request.
    void script(QList<Answer> answers) { answers_ = std::move(answers); }
    // An answer for one path, before the script; other paths get 404 when
    // there is no script.
    void route(const QByteArray& path, Answer a) { routes_.insert(path, std::move(a)); }
    const QList<SeenRequest>& requests() const { return requests_; }
    int disconnects() const { return disconnects_; }

    // Writes the status line and headers of a chunked answer.
    static void startChunked(QTcpSocket* s, const QByteArray& type = "text/event-stream") {
        s->write("HTTP/1.1 200 OK\r\nContent-Type: " + type + "\r\nTransfer-Encoding: chunked\r\nCache-Control: no-cache\r\n\r\n");
        s->flush();
    }
    static void chunk(QTcpSocket* s, const QByteArray& bytes) {
        s->write(QByteArray::number(bytes.size(), 16) + "\r\n" + bytes + "\r\n");
        s->flush();
    }
    static void endChunked(QTcpSocket* s) {
        s->write("0\r\n\r\n");
        s->flush();
    }
    // A whole answer with a body (no Content-Type header when `type` is empty).
    static void respond(QTcpSocket* s, int status, const QByteArray& reason, const QByteArray& body,
                        const QByteArray& extraHeaders = {}, const QByteArray& type = "application/json") {
        s->write("HTTP/1.1 " + QByteArray::number(status) + " " + reason +
                 (type.isEmpty() ? QByteArray() : "\r\nContent-Type: " + type) + "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n" + extraHeaders + "\r\n" + body);
        s->flush();
    }
    // A stream in pieces, each written on its own turn of the event loop so
    // the client reads them separately; `last` runs after the final piece.
    static void streamPieces(QTcpSocket* s, QList<QByteArray> pieces, std::function<void(QTcpSocket*)> last = endChunked) {
        startChunked(s);
        writeNext(QPointer<QTcpSocket>(s), std::move(pieces), 0, std::move(last));
    }

private:
    static void writeNext(QPointer<QTcpSocket> s, QList<QByteArray> pieces, qsizetype i, std::function<void(QTcpSocket*)> last) {
        if (!s) return;
        if (i == pieces.size()) {
            if (last) last(s);
            return;
        }
        chunk(s, pieces[i]);
        QTimer::singleShot(5, s, [s, pieces = std::move(pieces), i, last = std::move(last)]() mutable {
            writeNext(s, std::move(pieces), i + 1, std::move(last));
        });
    }

    void accept(QTcpSocket* s) {
        auto buffer = std::make_shared<QByteArray>();
        connect(s, &QTcpSocket::disconnected, this, [this, s] {
            ++disconnects_;
            s->deleteLater();
        });
        connect(s, &QTcpSocket::readyRead, this, [this, s, buffer] {
            buffer->append(s->readAll());
            while (true) {
                const qsizetype end = buffer->indexOf("\r\n\r\n");
                if (end < 0) return;
                SeenRequest r;
                const QList<QByteArray> lines = buffer->left(end).split('\n');
                const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
                r.method = first.value(0);
                r.path = first.value(1);
                for (qsizetype i = 1; i < lines.size(); ++i) {
                    const qsizetype colon = lines[i].indexOf(':');
                    if (colon > 0) r.headers.insert(lines[i].left(colon).trimmed().toLower(), lines[i].mid(colon + 1).trimmed());
                }
                const qsizetype length = r.headers.value("content-length", "0").toLongLong();
                if (buffer->size() < end + 4 + length) return;
                r.body = buffer->mid(end + 4, length);
                buffer->remove(0, end + 4 + length);
                requests_.append(r);
                if (routes_.contains(r.path)) routes_.value(r.path)(s, r);
                else if (!answers_.isEmpty()) answers_.value(std::min<qsizetype>(requests_.size() - 1, answers_.size() - 1))(s, r);
                else respond(s, 404, "Not Found", "{\"error\":\"not found\"}");
            }
        });
    }

    QTcpServer tcp_;
    QList<Answer> answers_;
    QHash<QByteArray, Answer> routes_;
    QList<SeenRequest> requests_;
    int disconnects_ = 0;
};

} // namespace weir::test
