// The runner behind weir_test.h: runs the registered tests (all, or those
// whose "Suite.name" contains one of the command-line filters), prints each
// failure with its place and values, and a summary.
// Exit status: 0 all passed, 1 a test failed, 77 every selected test was
// skipped (ctest's SKIP_RETURN_CODE shows it as skipped), 2 bad usage.
#include "tests/support/weir_test.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace weirtest {
namespace {

struct Test {
    std::string suite, name;
    TestFunction fn;
    std::string fullName() const { return suite + "." + name; }
};

struct Hooks {
    TestFunction setUp = nullptr, tearDown = nullptr;
};

// Function-local statics: registration runs during static initialisation
// of the test files, in an order we do not control.
std::vector<Test>& tests() {
    static std::vector<Test> all;
    return all;
}
std::map<std::string, Hooks>& hooks() {
    static std::map<std::string, Hooks> all;
    return all;
}

// A failing check inside a loop of thousands prints the first few only.
constexpr int kPrintedFailuresPerTest = 20;

struct RunState {
    long long checksPassed = 0, checksFailed = 0;
    bool testFailed = false;
    int printedFailures = 0, unprintedFailures = 0;
    std::vector<std::string> contexts;
};
RunState state;

std::string contextLine() {
    std::string line;
    for (const auto& c : state.contexts) line += (line.empty() ? "" : ", ") + c;
    return line;
}

enum class Outcome { Passed, Failed, Skipped };

struct Result {
    Outcome outcome = Outcome::Passed;
    std::string skipReason;
};

// Runs fn, turning aborts, skips and stray exceptions into an outcome.
Result runGuarded(const std::function<void()>& fn, const std::string& label) {
    Result r;
    const bool failedBefore = state.testFailed;
    state.testFailed = false;
    try {
        fn();
    } catch (const TestAborted&) {
        // the failure is already printed and counted
    } catch (const TestSkipped& s) {
        r.outcome = Outcome::Skipped;
        r.skipReason = s.reason;
    } catch (const std::exception& e) {
        failed({label.c_str(), 0}, "no exception escapes the test", std::string("  uncaught exception: ") + e.what(),
               false);
    } catch (...) {
        failed({label.c_str(), 0}, "no exception escapes the test", "  uncaught exception of unknown type", false);
    }
    if (state.testFailed) r.outcome = Outcome::Failed;  // a failed check outweighs a later skip
    state.testFailed = state.testFailed || failedBefore;
    return r;
}

void printUsage(const char* argv0) {
    std::cout << "usage: " << argv0 << " [-l|--list] [FILTER...]\n"
              << "  runs the tests whose Suite.name contains one of the FILTERs (all when none given)\n"
              << "  -l, --list   print the test names and exit\n";
}

} // namespace

void passed() { ++state.checksPassed; }

void failed(Location where, const std::string& what, const std::string& detail, bool fatal) {
    ++state.checksFailed;
    state.testFailed = true;
    if (state.printedFailures < kPrintedFailuresPerTest) {
        ++state.printedFailures;
        std::cout << where.file << ":" << where.line << ": FAILED: " << what << "\n";
        if (!detail.empty()) std::cout << detail << "\n";
        if (!state.contexts.empty()) std::cout << "  in " << contextLine() << "\n";
        std::cout.flush();
    } else {
        ++state.unprintedFailures;
    }
    if (fatal) throw TestAborted{};
}

bool currentTestFailed() { return state.testFailed; }

void skip(Location where, const std::string& reason) {
    (void)where;
    throw TestSkipped{reason};
}

Context::Context(std::string label) { state.contexts.push_back(std::move(label)); }
Context::~Context() { state.contexts.pop_back(); }

void runRow(const std::string& name, const std::function<void()>& body) {
    Context row("row \"" + name + "\"");
    const Result r = runGuarded(body, name);
    if (r.outcome == Outcome::Skipped) std::cout << "  SKIPPED: row \"" << name << "\": " << r.skipReason << "\n";
}

Registrar::Registrar(const char* suite, const char* name, TestFunction fn) { tests().push_back({suite, name, fn}); }

HookRegistrar::HookRegistrar(const char* suite, HookKind kind, TestFunction fn) {
    Hooks& h = hooks()[suite];
    (kind == HookKind::SuiteSetUp ? h.setUp : h.tearDown) = fn;
}

std::string environment(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

} // namespace weirtest

int main(int argc, char** argv) {
    using namespace weirtest;
    std::vector<std::string> filters;
    bool list = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-l" || a == "--list") list = true;
        else if (a == "-h" || a == "--help") {
            printUsage(argv[0]);
            return 0;
        } else if (!a.empty() && a[0] == '-') {
            std::cerr << "unknown option " << a << "\n";
            printUsage(argv[0]);
            return 2;
        } else filters.push_back(a);
    }

    std::vector<const Test*> selected;
    for (const Test& t : tests()) {
        bool match = filters.empty();
        for (const auto& f : filters) match = match || t.fullName().find(f) != std::string::npos;
        if (match) selected.push_back(&t);
    }
    if (list) {
        for (const Test* t : selected) std::cout << t->fullName() << "\n";
        return 0;
    }
    if (selected.empty()) {
        std::cerr << "no test matches the filter" << (filters.size() > 1 ? "s" : "") << "\n";
        return 2;
    }

    std::map<std::string, Result> suiteSetUp;
    int passedTests = 0, failedTests = 0, skippedTests = 0;
    std::vector<std::string> failedNames;
    for (const Test* t : selected) {
        state.printedFailures = state.unprintedFailures = 0;
        state.testFailed = false;
        const Hooks hook = hooks().count(t->suite) ? hooks()[t->suite] : Hooks{};
        if (hook.setUp && !suiteSetUp.count(t->suite)) {
            Context c(t->suite + " set-up");
            suiteSetUp[t->suite] = runGuarded(hook.setUp, t->suite + " set-up");
        }
        Result r;
        if (auto s = suiteSetUp.find(t->suite); s != suiteSetUp.end() && s->second.outcome != Outcome::Passed) {
            r = s->second;
            if (r.outcome == Outcome::Failed) std::cout << "  (the suite's set-up failed)\n";
        } else {
            r = runGuarded(t->fn, t->fullName());
            if (hook.tearDown) {
                Context c("tear-down after " + t->fullName());
                const Result down = runGuarded(hook.tearDown, t->fullName() + " tear-down");
                if (down.outcome == Outcome::Failed) r.outcome = Outcome::Failed;
            }
        }
        if (state.unprintedFailures > 0)
            std::cout << "  ... and " << state.unprintedFailures << " more failed checks not printed\n";
        switch (r.outcome) {
        case Outcome::Passed:
            ++passedTests;
            std::cout << "PASS    " << t->fullName() << "\n";
            break;
        case Outcome::Failed:
            ++failedTests;
            failedNames.push_back(t->fullName());
            std::cout << "FAIL    " << t->fullName() << "\n";
            break;
        case Outcome::Skipped:
            ++skippedTests;
            std::cout << "SKIPPED: " << t->fullName() << ": " << r.skipReason << "\n";
            break;
        }
        std::cout.flush();
    }

    std::cout << "\n" << selected.size() << " tests: " << passedTests << " passed, " << failedTests << " failed, "
              << skippedTests << " skipped; " << state.checksPassed << " checks passed, " << state.checksFailed
              << " failed\n";
    for (const auto& n : failedNames) std::cout << "  failed: " << n << "\n";
    if (failedTests > 0) return 1;
    if (passedTests == 0 && skippedTests > 0) return 77;
    return 0;
}
