// weir::server::HttpRequestReader on its own: requests fed whole and byte by
// byte give the same result; a pipelined second request stays with the
// caller; every limit and every malformed or ambiguous head is refused with
// the status HTTP prescribes, before any body is read.
#include <QtTest>

#include "app/server/http_request_reader.h"

using weir::server::HttpLimits;
using weir::server::HttpRequest;
using weir::server::HttpRequestReader;
using State = HttpRequestReader::State;

namespace {

struct Outcome {
    State state;
    int status = 0;           // the failure's, when failed
    qsizetype used = 0;
    HttpRequest request;
};

Outcome feedAll(const QByteArray& bytes, HttpLimits limits = {}) {
    HttpRequestReader r(limits);
    Outcome o{State::ReadingHead};
    o.used = r.feed(bytes);
    o.state = r.state();
    if (o.state == State::Failed) o.status = r.failure().status;
    if (o.state == State::Complete) o.request = r.take();
    return o;
}

Outcome feedByteByByte(const QByteArray& bytes, HttpLimits limits = {}) {
    HttpRequestReader r(limits);
    Outcome o{State::ReadingHead};
    for (qsizetype i = 0; i < bytes.size(); ++i) {
        o.used += r.feed(QByteArrayView(bytes).sliced(i, 1));
        if (r.state() == State::Complete || r.state() == State::Failed) break;
    }
    o.state = r.state();
    if (o.state == State::Failed) o.status = r.failure().status;
    if (o.state == State::Complete) o.request = r.take();
    return o;
}

int statusOf(const QByteArray& bytes, HttpLimits limits = {}) {
    const Outcome o = feedAll(bytes, limits);
    return o.state == State::Failed ? o.status : (o.state == State::Complete ? 200 : 0);
}

} // namespace

class HttpRequestReaderTest : public QObject {
    Q_OBJECT
private slots:
    void readsAPostWholeOrByteByByte() {
        const QByteArray body = R"({"model":"m"})";
        const QByteArray wire = "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: localhost:8719\r\n"
                                "Content-Type: application/json\r\nContent-Length: " +
                                QByteArray::number(body.size()) + "\r\n\r\n" + body;
        for (const Outcome& o : {feedAll(wire), feedByteByByte(wire)}) {
            QCOMPARE(o.state, State::Complete);
            QCOMPARE(o.used, wire.size());
            QCOMPARE(o.request.method, QByteArray("POST"));
            QCOMPARE(o.request.path, QStringLiteral("/v1/chat/completions"));
            QCOMPARE(o.request.target, QByteArray("/v1/chat/completions?x=1"));
            QCOMPARE(o.request.minorVersion, 1);
            QCOMPARE(o.request.header("content-type"), QByteArray("application/json"));
            QCOMPARE(o.request.header("HOST"), QByteArray("localhost:8719"));
            QCOMPARE(o.request.body, body);
            QVERIFY(o.request.keepAlive());
        }
    }

    void stopsAtTheEndOfOneRequest() {
        const QByteArray first = "GET /health HTTP/1.1\r\nHost: a\r\n\r\n";
        const QByteArray second = "GET /v1/models HTTP/1.1\r\nHost: a\r\n\r\n";
        HttpRequestReader r{HttpLimits{}};
        const qsizetype used = r.feed(first + second);
        QCOMPARE(used, first.size());
        QCOMPARE(r.state(), State::Complete);
        QCOMPARE(r.take().path, QStringLiteral("/health"));
        QCOMPARE(r.state(), State::ReadingHead);
        QVERIFY(!r.started());
        QCOMPARE(r.feed(second), second.size());
        QCOMPARE(r.take().path, QStringLiteral("/v1/models"));
    }

    void blankLinesBeforeARequestAndBareLineFeeds() {
        const Outcome o = feedAll("\r\n\r\nGET /health HTTP/1.1\nHost: a\n\n");
        QCOMPARE(o.state, State::Complete);
        QCOMPARE(o.request.path, QStringLiteral("/health"));
        HttpRequestReader r{HttpLimits{}};
        r.feed("\r\n");
        QVERIFY2(!r.started(), "blank lines alone are not a request");
    }

    void connectionHeaders() {
        QVERIFY(!feedAll("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").request.keepAlive());
        QVERIFY(!feedAll("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, Close\r\n\r\n").request.keepAlive());
        QVERIFY(!feedAll("GET / HTTP/1.0\r\n\r\n").request.keepAlive());
        QVERIFY(feedAll("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").request.keepAlive());
    }

    void absoluteFormTarget() {
        const Outcome o = feedAll("GET http://localhost:8719/v1/models?a=b HTTP/1.1\r\nHost: localhost:8719\r\n\r\n");
        QCOMPARE(o.state, State::Complete);
        QCOMPARE(o.request.path, QStringLiteral("/v1/models"));
    }

    void expectContinueIsSeenBeforeTheBody() {
        HttpRequestReader r{HttpLimits{}};
        r.feed("POST /v1/completions HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
        QCOMPARE(r.state(), State::ReadingBody);
        QVERIFY(r.wantsContinue());
        r.feed("abcd");
        QCOMPARE(r.state(), State::Complete);
        QCOMPARE(r.take().body, QByteArray("abcd"));
        QCOMPARE(statusOf("POST / HTTP/1.1\r\nHost: a\r\nExpect: something-else\r\nContent-Length: 1\r\n\r\nx"), 417);
    }

    void malformedHeadsAre400() {
        QCOMPARE(statusOf("GET /\r\n\r\n"), 400);                                         // no version
        QCOMPARE(statusOf("GET  / HTTP/1.1\r\nHost: a\r\n\r\n"), 400);                    // two spaces
        QCOMPARE(statusOf("G(T / HTTP/1.1\r\nHost: a\r\n\r\n"), 400);                     // method not a token
        QCOMPARE(statusOf("GET relative HTTP/1.1\r\nHost: a\r\n\r\n"), 400);              // not origin-form
        QCOMPARE(statusOf("GET / HTTP/1.1\r\nHost: a\r\nNo colon here\r\n\r\n"), 400);
        QCOMPARE(statusOf("GET / HTTP/1.1\r\nHost: a\r\nName : v\r\n\r\n"), 400);          // space before colon
        QCOMPARE(statusOf("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n folded\r\n\r\n"), 400);   // obsolete folding
        QByteArray nul = "GET / HTTP/1.1\r\nHost: a\r\nX: a";
        nul += '\0';
        nul += "b\r\n\r\n";
        QCOMPARE(statusOf(nul), 400);                                                      // NUL in a value
        QCOMPARE(statusOf("GET / HTTP/1.1\r\n\r\n"), 400);                                 // 1.1 without Host
        QCOMPARE(statusOf("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400);           // two Hosts
        QCOMPARE(statusOf("GET / HTTP/2.0\r\nHost: a\r\n\r\n"), 505);
        QCOMPARE(statusOf("GET / HTTP/1.0\r\n\r\n"), 200);                                 // 1.0 needs no Host
    }

    void ambiguousFramingIsRefused() {
        QCOMPARE(statusOf("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"), 400);
        QCOMPARE(statusOf("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"), 200);
        QCOMPARE(statusOf("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n"), 400);
        QCOMPARE(statusOf("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n"), 400);
        QCOMPARE(statusOf("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
        QCOMPARE(statusOf("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n"), 411);
        QCOMPARE(statusOf("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n"), 501);
    }

    void limits() {
        HttpLimits l;
        l.maxRequestLineBytes = 64;
        l.maxHeadBytes = 256;
        l.maxHeaderCount = 4;
        l.maxBodyBytes = 10;
        QCOMPARE(statusOf("GET /" + QByteArray(100, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n", l), 414);
        // A request line that never ends is refused once it is too long, not when it ends.
        QCOMPARE(feedByteByByte("GET /" + QByteArray(100, 'a'), l).status, 414);
        QCOMPARE(statusOf("GET / HTTP/1.1\r\nHost: a\r\nX: " + QByteArray(300, 'b') + "\r\n\r\n", l), 431);
        QCOMPARE(feedByteByByte("GET / HTTP/1.1\r\nHost: a\r\nX: " + QByteArray(300, 'b'), l).status, 431);
        QCOMPARE(statusOf("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", l), 431);
        // The body's size is refused from the head alone: nothing of it was read.
        const QByteArray head = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n";
        const Outcome o = feedAll(head + QByteArray(11, 'x'), l);
        QCOMPARE(o.status, 413);
        QCOMPARE(o.used, head.size());
        QCOMPARE(statusOf("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n" + QByteArray(10, 'x'), l), 200);
        QCOMPARE(statusOf("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", l), 400);
    }
};

QTEST_GUILESS_MAIN(HttpRequestReaderTest)
#include "http_request_reader_test.moc"
