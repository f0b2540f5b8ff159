// StopStringMatcher: text that may begin a stop string is held back; the
// earliest complete stop string ends the output, even across deltas.
#include <QtTest>

#include "engine/scheduler/stop_strings.h"

using weir::StopStringMatcher;

class StopStringsTest : public QObject {
    Q_OBJECT
private slots:
    void passesTextWithoutStops() {
        StopStringMatcher m({});
        QCOMPARE(m.push("hello ").text, std::string("hello "));
        QCOMPARE(m.push("world").text, std::string("world"));
        QCOMPARE(m.flush(), std::string());
    }
    void holdsBackPossibleStart() {
        StopStringMatcher m({"</end>"});
        auto r = m.push("abc</e");
        QCOMPARE(r.text, std::string("abc"));
        QVERIFY(!r.stopped);
        r = m.push("x more");  // not a stop after all: held text is released
        QCOMPARE(r.text, std::string("</ex more"));
        QVERIFY(!r.stopped);
    }
    void stopSpanningDeltas() {
        StopStringMatcher m({"STOP"});
        std::string out;
        for (const char* d : {"one S", "T", "O", "P two"}) {
            auto r = m.push(d);
            out += r.text;
            if (r.stopped) break;
        }
        QVERIFY(m.stopped());
        QCOMPARE(out, std::string("one "));
        QCOMPARE(m.flush(), std::string());
        QVERIFY(m.push("more").text.empty());
    }
    void earliestStopWins() {
        StopStringMatcher m({"world", "lo w"});
        auto r = m.push("hello world");
        QVERIFY(r.stopped);
        QCOMPARE(r.text, std::string("hel"));
    }
    void flushReturnsHeldText() {
        StopStringMatcher m({"\n\nUser:"});
        auto r = m.push("answer\n\nUs");
        QCOMPARE(r.text, std::string("answer"));
        QCOMPARE(m.flush(), std::string("\n\nUs"));
    }
    void holdsLongestPossiblePrefix() {
        // "aab" ends with "a"+"ab"; the stop "abc" could start at the second a.
        StopStringMatcher m({"abc", "xyz"});
        auto r = m.push("aab");
        QCOMPARE(r.text, std::string("a"));
        r = m.push("c");
        QVERIFY(r.stopped);
        QCOMPARE(r.text, std::string());
    }
};

QTEST_APPLESS_MAIN(StopStringsTest)
#include "stop_strings_test.moc"
