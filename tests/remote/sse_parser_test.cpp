// The server-sent events parser: the rules of the event stream format, and
// the same events whatever the reads look like (every split into two and
// three pieces, and byte by byte).
#include <QtTest>

#include "app/remote/sse_parser.h"

using namespace weir::remote;

namespace {

QList<SseEvent> whole(const QByteArray& s) {
    SseParser p;
    return p.feed(s);
}

QString show(const QList<SseEvent>& events) {
    QStringList out;
    for (const SseEvent& e : events) out << QStringLiteral("[%1|%2|%3]").arg(e.type, QString::fromUtf8(e.data), e.id);
    return out.join(QLatin1Char(' '));
}

// A stream with every rule in it: a BOM, CRLF, lone CR and LF line ends,
// comments, multi-line data, "data" with and without the space, an event
// type, ids, retry, an unknown field, a field without a colon, an event
// with no data, an empty data line, and UTF-8 of two to four bytes.
const QByteArray kStream =
    "\xEF\xBB\xBF"
    ": keep-alive comment\r\n"
    "data: {\"a\":1}\r\n\r\n"
    "data:first\rdata:  second\r\r"
    "event: note\nid: 7\ndata: caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\n\n"
    "retry: 2500\nunknown: x\ndata\n\n"
    "event: empty\n\n"
    "data: [DONE]\n\n"
    "data: unfinished";

} // namespace

class SseParserTest : public QObject {
    Q_OBJECT
private slots:
    void rules() {
        SseParser p;
        const QList<SseEvent> e = p.feed(kStream);
        QCOMPARE(e.size(), 5);
        QCOMPARE(e[0].type, QStringLiteral("message"));
        QCOMPARE(e[0].data, QByteArray("{\"a\":1}"));
        QCOMPARE(e[1].data, QByteArray("first\n second"));   // only one space is dropped
        QCOMPARE(e[2].type, QStringLiteral("note"));
        QCOMPARE(e[2].id, QStringLiteral("7"));
        QCOMPARE(QString::fromUtf8(e[2].data), QStringLiteral("café € 😀"));
        QCOMPARE(e[3].data, QByteArray(""));                   // "data" with no colon: an empty data line
        QCOMPARE(e[3].id, QStringLiteral("7"));                // the last id carries over
        QCOMPARE(e[4].data, QByteArray("[DONE]"));            // "event: empty" had no data: dropped
        QCOMPARE(p.retryMs(), 2500);
        QVERIFY(p.hasPartialEvent());                          // "data: unfinished" never ended
    }

    void sameEventsWhateverTheReads() {
        const QString expected = show(whole(kStream));
        for (qsizetype i = 0; i <= kStream.size(); ++i) {
            for (qsizetype j = i; j <= kStream.size(); ++j) {
                SseParser p;
                QList<SseEvent> got = p.feed(kStream.first(i));
                got += p.feed(kStream.sliced(i, j - i));
                got += p.feed(kStream.sliced(j));
                if (show(got) != expected)
                    QFAIL(qPrintable(QStringLiteral("split at %1 and %2: %3").arg(i).arg(j).arg(show(got))));
            }
        }
        SseParser p;
        QList<SseEvent> got;
        for (char c : kStream) got += p.feed(QByteArrayView(&c, 1));
        QCOMPARE(show(got), expected);
    }

    void crAtTheEndOfOneReadAndLfAtTheStartOfTheNext() {
        // One line end, not two: no empty line, so no dispatch in between.
        SseParser p;
        QVERIFY(p.feed("data: a\r").isEmpty());
        QVERIFY(p.feed("\ndata: b\r").isEmpty());
        const QList<SseEvent> e = p.feed("\n\r\n");
        QCOMPARE(e.size(), 1);
        QCOMPARE(e[0].data, QByteArray("a\nb"));
    }

    void retryMustBeDigits() {
        SseParser p;
        p.feed("retry: 12x\n\nretry: -5\n\n");
        QCOMPARE(p.retryMs(), -1);
    }
};

QTEST_GUILESS_MAIN(SseParserTest)
#include "sse_parser_test.moc"
