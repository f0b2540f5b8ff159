#pragma once
// HTTP over a plain blocking QTcpSocket, for tests that need to see the wire:
// exact requests (any header, partial heads, slow bodies), the response's
// framing (chunks, Connection: close), and whether the server closed the
// connection. Blocking waits need no event loop, so they also show that the
// server answers from a thread of its own. Every wait has a generous limit
// that only guards against a hang.
#include <QByteArray>
#include <QElapsedTimer>
#include <QMap>
#include <QTcpSocket>

namespace weir::test::raw {

// How long a client waits for the server: 30 s, times WEIR_TEST_TIMEOUT_SCALE
// (set by the sanitizer presets, where tokenizing a 6 MiB prompt takes longer).
inline int patienceMs() {
    static const int ms = [] {
        const int scale = qEnvironmentVariableIntValue("WEIR_TEST_TIMEOUT_SCALE");
        return 30000 * (scale > 1 ? scale : 1);
    }();
    return ms;
}

struct Response {
    int status = 0;                      // 0: no complete head arrived
    QMap<QByteArray, QByteArray> headers;  // lower-case names
    QByteArray body;                     // de-chunked
    bool chunked = false;
    bool complete = false;               // the body ended as its framing says (last chunk, length, close)
    QByteArray header(const char* name) const { return headers.value(QByteArray(name).toLower()); }
};

inline bool connectTo(QTcpSocket& s, quint16 port) {
    s.connectToHost(QStringLiteral("127.0.0.1"), port);
    return s.waitForConnected(patienceMs());
}

inline QByteArray request(const QByteArray& method, const QByteArray& path, const QByteArray& body = {},
                          const QByteArray& extraHeaders = {}, const QByteArray& host = "127.0.0.1") {
    QByteArray r = method + ' ' + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + extraHeaders;
    if (!body.isEmpty() || method == "POST")
        r += "Content-Type: application/json\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n";
    return r + "\r\n" + body;
}

inline bool sendAll(QTcpSocket& s, const QByteArray& bytes) {
    s.write(bytes);
    while (s.bytesToWrite() > 0)
        if (!s.waitForBytesWritten(patienceMs())) return false;
    return true;
}

// Reads until `done(buffer)` or the peer closes; false on a hang.
template <typename Done>
bool readUntil(QTcpSocket& s, QByteArray& buffer, Done done) {
    QElapsedTimer clock;
    clock.start();
    while (!done(buffer)) {
        if (s.bytesAvailable() > 0) {
            buffer += s.readAll();
            continue;
        }
        if (s.state() != QAbstractSocket::ConnectedState) return false;
        if (clock.elapsed() > patienceMs()) return false;
        s.waitForReadyRead(200);
        buffer += s.readAll();
    }
    return true;
}

// True once the peer has closed the connection (what arrives meanwhile goes
// to `received`); false if it stays open past the patience limit.
inline bool waitForClose(QTcpSocket& s, QByteArray* received = nullptr) {
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < patienceMs()) {
        if (s.state() != QAbstractSocket::ConnectedState) break;
        s.waitForReadyRead(200);
        const QByteArray got = s.readAll();
        if (received) *received += got;
    }
    const QByteArray rest = s.readAll();
    if (received) *received += rest;
    return s.state() != QAbstractSocket::ConnectedState;
}

// Parses one response off the front of `buffer` (reading more from `s` as
// needed) and removes it from the buffer.
inline Response readResponse(QTcpSocket& s, QByteArray& buffer) {
    Response r;
    readUntil(s, buffer, [](const QByteArray& b) { return b.contains("\r\n\r\n"); });
    const qsizetype headEnd = buffer.indexOf("\r\n\r\n");
    if (headEnd < 0) return r;
    const QList<QByteArray> lines = buffer.left(headEnd).split('\n');
    buffer.remove(0, headEnd + 4);
    const QList<QByteArray> statusLine = lines.first().trimmed().split(' ');
    if (statusLine.size() < 2) return r;
    r.status = statusLine[1].toInt();
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        if (colon > 0) r.headers.insert(lines[i].left(colon).trimmed().toLower(), lines[i].mid(colon + 1).trimmed());
    }
    if (r.status == 100) return readResponse(s, buffer);
    r.chunked = r.header("transfer-encoding").toLower() == "chunked";
    if (r.chunked) {
        for (;;) {
            if (!readUntil(s, buffer, [](const QByteArray& b) { return b.contains("\r\n"); })) return r;
            const qsizetype eol = buffer.indexOf("\r\n");
            bool ok = false;
            const qsizetype size = buffer.left(eol).toLongLong(&ok, 16);
            if (!ok) return r;
            if (!readUntil(s, buffer, [&](const QByteArray& b) { return b.size() >= eol + 2 + size + 2; })) return r;
            r.body += buffer.mid(eol + 2, size);
            buffer.remove(0, eol + 2 + size + 2);
            if (size == 0) {
                r.complete = true;
                return r;
            }
        }
    }
    if (r.headers.contains("content-length")) {
        const qsizetype n = r.header("content-length").toLongLong();
        r.complete = readUntil(s, buffer, [n](const QByteArray& b) { return b.size() >= n; });
        r.body = buffer.left(n);
        buffer.remove(0, std::min(n, buffer.size()));
        return r;
    }
    waitForClose(s, &buffer);  // close-delimited
    r.body = buffer;
    buffer.clear();
    r.complete = true;
    return r;
}

inline Response exchange(quint16 port, const QByteArray& bytes) {
    QTcpSocket s;
    if (!connectTo(s, port) || !sendAll(s, bytes)) return {};
    QByteArray buffer;
    return readResponse(s, buffer);
}

// The "data: " payloads of a server-sent-events body, in order.
inline QByteArrayList sseData(const QByteArray& body) {
    QByteArrayList out;
    for (const QByteArray& line : body.split('\n'))
        if (line.startsWith("data: ")) out << line.mid(6);
    return out;
}

} // namespace weir::test::raw
