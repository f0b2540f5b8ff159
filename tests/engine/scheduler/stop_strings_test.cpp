// StopStringMatcher: text that may begin a stop string is held back; the
// earliest complete stop string ends the output, even across deltas.
#include "tests/support/weir_test.h"

#include "engine/chat/tool_format.h"
#include "engine/scheduler/active_request.h"
#include "engine/scheduler/stop_strings.h"

using weir::StopStringMatcher;

WEIR_TEST(StopStrings, passesTextWithoutStops) {
    StopStringMatcher m({});
    REQUIRE_EQ(m.push("hello ").text, std::string("hello "));
    REQUIRE_EQ(m.push("world").text, std::string("world"));
    REQUIRE_EQ(m.flush(), std::string());
}
WEIR_TEST(StopStrings, holdsBackPossibleStart) {
    StopStringMatcher m({"</end>"});
    auto r = m.push("abc</e");
    REQUIRE_EQ(r.text, std::string("abc"));
    REQUIRE(!r.stopped);
    r = m.push("x more");  // not a stop after all: held text is released
    REQUIRE_EQ(r.text, std::string("</ex more"));
    REQUIRE(!r.stopped);
}
WEIR_TEST(StopStrings, stopSpanningDeltas) {
    StopStringMatcher m({"STOP"});
    std::string out;
    for (const char* d : {"one S", "T", "O", "P two"}) {
        auto r = m.push(d);
        out += r.text;
        if (r.stopped) break;
    }
    REQUIRE(m.stopped());
    REQUIRE_EQ(out, std::string("one "));
    REQUIRE_EQ(m.flush(), std::string());
    REQUIRE(m.push("more").text.empty());
}
WEIR_TEST(StopStrings, earliestStopWins) {
    StopStringMatcher m({"world", "lo w"});
    auto r = m.push("hello world");
    REQUIRE(r.stopped);
    REQUIRE_EQ(r.text, std::string("hel"));
    REQUIRE_EQ(m.matched(), 1);  // "lo w" begins first
}
WEIR_TEST(StopStrings, matchedIndexCountsDroppedEmptyStops) {
    // Empty stop strings are dropped, yet the index is the caller's.
    StopStringMatcher m({"", "never", "END"});
    REQUIRE_EQ(m.matched(), -1);
    auto r = m.push("text END more");
    REQUIRE(r.stopped);
    REQUIRE_EQ(m.matched(), 2);
}
WEIR_TEST(StopStrings, flushReturnsHeldText) {
    StopStringMatcher m({"\n\nUser:"});
    auto r = m.push("answer\n\nUs");
    REQUIRE_EQ(r.text, std::string("answer"));
    REQUIRE_EQ(m.flush(), std::string("\n\nUs"));
}
WEIR_TEST(StopStrings, holdsLongestPossiblePrefix) {
    // "aab" ends with "a"+"ab"; the stop "abc" could start at the second a.
    StopStringMatcher m({"abc", "xyz"});
    auto r = m.push("aab");
    REQUIRE_EQ(r.text, std::string("a"));
    r = m.push("c");
    REQUIRE(r.stopped);
    REQUIRE_EQ(r.text, std::string());
}

// Issue 26: SmolLM2 often opened its answer after a tool result with the
// "```tool_output" fence the format stops on, and the reply ended empty. An
// opener found before any text is kept as text (the fence then renders as a
// code block); found after text, it still stops.
WEIR_TEST(StopStrings, openerAtTheStartIsKeptAsText) {
    StopStringMatcher m({"<end_of_turn>", "```tool_output"}, {"```tool_output"});
    std::string out;
    for (const char* d : {"\n", "```tool", "_output", "\nSunny, 21 C.\n```\n", "Enjoy"}) {
        auto r = m.push(d);
        REQUIRE_MSG(!r.stopped, d);
        out += r.text;
    }
    REQUIRE_EQ(out, std::string("\n```tool_output\nSunny, 21 C.\n```\nEnjoy"));
    // Later in the reply it is the model inventing a tool result: stop.
    auto r = m.push("\n```tool_output\n{}");
    REQUIRE(r.stopped);
    REQUIRE_EQ(r.text, std::string("\n"));
    REQUIRE_EQ(m.matched(), 1);
}
WEIR_TEST(StopStrings, otherStopsAtTheStartStillStop) {
    // A client's stop string keeps its meaning: an empty reply when it comes first.
    StopStringMatcher m({"STOP", "```tool_output"}, {"```tool_output"});
    auto r = m.push("STOP and more");
    REQUIRE(r.stopped);
    REQUIRE_EQ(r.text, std::string());
    REQUIRE_EQ(m.matched(), 0);
}
WEIR_TEST(StopStrings, requestsKeepEveryFamilysLeadingResultOpener) {
    // The scheduler's requests use the tool formats' result openers.
    for (const std::string& opener : weir::ToolFormat::resultOpeners()) {
        weir::GenerateRequest req;
        req.stop = {"<end_of_turn>", opener};
        weir::ActiveRequest a(1, std::move(req), {}, nullptr);
        auto r = a.stops.push(opener + "\nIt is sunny.");
        REQUIRE_MSG(!r.stopped, opener.c_str());
        REQUIRE_EQ(r.text, opener + "\nIt is sunny.");
        REQUIRE(a.stops.push(opener).stopped);
    }
    REQUIRE(!weir::ToolFormat::resultOpeners().empty());
}
