#pragma once
// A small test runner for the plain C++ tests (engine, kernels): no Qt, no
// third-party framework. A test is a function registered by WEIR_TEST; the
// assertions print file:line, both values and a message when they fail.
//
//   WEIR_TEST(PagePool, allocatesAndFrees) { CHECK_EQ(pool.free(), 4); }
//
// CHECK* records a failure and goes on; REQUIRE* (and FAIL) records it and
// ends the current test (or the current row of weirtest::eachRow).
// SKIP(reason) ends the test as skipped. Floating-point CHECK_EQ compares
// the way the Qt Test QCOMPARE these tests were written for did (relative
// 1e-12 for double, 1e-5 for float, near-zero against zero, NaN equals NaN),
// so converted assertions keep their meaning; CHECK_NEAR takes a tolerance.
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace weirtest {

// Thrown by a fatal assertion or SKIP; caught by the runner, never by tests.
struct TestAborted {};
struct TestSkipped { std::string reason; };

// ---- printing values in failure messages ----

template <class T>
concept Streamable = requires(std::ostream& os, const T& v) { os << v; };
template <class T>
concept Iterable = requires(const T& v) { v.begin(); v.end(); };

template <class T>
std::string describe(const T& v);

template <class T>
void describeInto(std::ostream& os, const T& v) {
    using U = std::remove_cvref_t<T>;
    if constexpr (std::is_same_v<U, bool>) {
        os << (v ? "true" : "false");
    } else if constexpr (std::is_same_v<U, char> || std::is_same_v<U, signed char> || std::is_same_v<U, unsigned char>) {
        os << int(v);  // bytes and small ints print as numbers
    } else if constexpr (std::is_floating_point_v<U>) {
        std::ostringstream s;
        s.precision(std::is_same_v<U, float> ? 9 : 17);
        s << v;
        os << s.str();
    } else if constexpr (std::is_enum_v<U>) {
        os << "enum " << static_cast<long long>(static_cast<std::underlying_type_t<U>>(v));
    } else if constexpr (std::is_convertible_v<const U&, std::string_view>) {
        os << '"' << std::string_view(v) << '"';
    } else if constexpr (std::is_same_v<U, std::nullptr_t>) {
        os << "nullptr";
    } else if constexpr (std::is_pointer_v<U>) {
        if (v == nullptr) os << "nullptr";
        else os << static_cast<const void*>(v);
    } else if constexpr (requires { typename U::value_type; v.has_value(); *v; } && !Iterable<U>) {
        if (v.has_value()) describeInto(os, *v);
        else os << "(empty)";
    } else if constexpr (requires { v.first; v.second; }) {
        os << '(';
        describeInto(os, v.first);
        os << ", ";
        describeInto(os, v.second);
        os << ')';
    } else if constexpr (Iterable<U>) {
        os << '[';
        size_t i = 0;
        for (const auto& e : v) {
            if (i == 32) {
                os << ", ...";  // long containers: the head is enough to read
                break;
            }
            if (i++) os << ", ";
            describeInto(os, e);
        }
        os << ']';
    } else if constexpr (Streamable<U>) {
        os << v;
    } else {
        os << "(value not printable)";
    }
}

template <class T>
std::string describe(const T& v) {
    std::ostringstream os;
    describeInto(os, v);
    return os.str();
}

template <class T>
void describeText(std::ostream& os, const T& v) {
    // Text pieces go in as they are, everything else as describe() prints it.
    if constexpr (std::is_convertible_v<const T&, std::string_view>) os << std::string_view(v);
    else describeInto(os, v);
}
// str(a, b, c...): the pieces written one after another, for messages.
template <class... Args>
std::string str(const Args&... args) {
    std::ostringstream os;
    (describeText(os, args), ...);
    return os.str();
}

// hex(0x2a, 4) is "0x002a": bit patterns in messages (more digits when needed).
inline std::string hex(uint64_t v, int digits) {
    static const char* kDigits = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < digits || v != 0; ++i, v >>= 4) out.insert(out.begin(), kDigits[v & 15]);
    return "0x" + out;
}

// ---- comparing ----

template <std::floating_point F>
bool fuzzyEqual(F actual, F expected) {
    constexpr F relative = std::is_same_v<F, float> ? F(1e-5) : F(1e-12);
    if (std::isnan(expected)) return std::isnan(actual);
    if (std::isinf(expected)) return std::isinf(actual) && (actual < 0) == (expected < 0);
    if (std::fabs(expected) <= relative) return std::fabs(actual) <= relative;  // near zero: both tiny
    return std::fabs(actual - expected) <= relative * std::fmin(std::fabs(actual), std::fabs(expected));
}

// The integers std::cmp_equal takes: no bool, no character types.
template <class T>
concept StandardInteger = std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char> &&
                          !std::is_same_v<T, wchar_t> && !std::is_same_v<T, char8_t> &&
                          !std::is_same_v<T, char16_t> && !std::is_same_v<T, char32_t>;

template <class A, class B>
bool equalValues(const A& a, const B& b) {
    using UA = std::remove_cvref_t<A>;
    using UB = std::remove_cvref_t<B>;
    if constexpr (std::is_floating_point_v<UA> && std::is_floating_point_v<UB>) {
        using F = std::conditional_t<std::is_same_v<UA, float> && std::is_same_v<UB, float>, float, double>;
        return fuzzyEqual(F(a), F(b));
    } else if constexpr (StandardInteger<UA> && StandardInteger<UB>) {
        return std::cmp_equal(a, b);  // mixed signedness compares by value
    } else {
        return a == b;
    }
}

// ---- the runner's bookkeeping (weir_test_main.cpp) ----

struct Location {
    const char* file;
    int line;
};

// Counts a passed check.
void passed();
// Reports a failed check; fatal ones throw TestAborted.
void failed(Location where, const std::string& what, const std::string& detail, bool fatal);
[[noreturn]] void skip(Location where, const std::string& reason);
// Whether a check of the running test (or data row) has failed so far.
bool currentTestFailed();

template <class A, class B>
void compare(Location where, const char* exprA, const char* exprB, const A& a, const B& b, bool fatal,
             const std::string& message = {}) {
    if (equalValues(a, b)) {
        passed();
        return;
    }
    std::string detail = "  actual   (" + std::string(exprA) + "): " + describe(a) + "\n  expected (" +
                         std::string(exprB) + "): " + describe(b);
    if (!message.empty()) detail += "\n  " + message;
    failed(where, std::string(exprA) + " == " + exprB, detail, fatal);
}

template <class A, class B>
void compareNot(Location where, const char* exprA, const char* exprB, const A& a, const B& b, bool fatal) {
    if (!equalValues(a, b)) {
        passed();
        return;
    }
    failed(where, std::string(exprA) + " != " + exprB, "  both are: " + describe(a), fatal);
}

template <class A, class B, class T>
void near(Location where, const char* exprA, const char* exprB, const A& a, const B& b, const T& tolerance,
          bool fatal) {
    const double da = double(a), db = double(b), tol = double(tolerance);
    if (std::fabs(da - db) <= tol) {
        passed();
        return;
    }
    failed(where, std::string(exprA) + " near " + exprB,
           "  actual   (" + std::string(exprA) + "): " + describe(da) + "\n  expected (" + exprB + "): " +
               describe(db) + "\n  difference " + describe(std::fabs(da - db)) + " > tolerance " + describe(tol),
           fatal);
}

inline void verify(Location where, const char* expr, bool ok, bool fatal, const std::string& message = {}) {
    if (ok) {
        passed();
        return;
    }
    failed(where, expr, message.empty() ? std::string() : "  " + message, fatal);
}

// Labels the failures reported while it lives ("row Q4_K", "step 12"...).
class Context {
public:
    explicit Context(std::string label);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
};

// Data-driven cases: fn(row) for every row, each row labelled with its
// name and run on its own, so a fatal failure or skip in one row leaves the
// others running (as Qt Test data rows did). Row needs a `name` member.
void runRow(const std::string& name, const std::function<void()>& body);
template <class Row, class Fn>
void eachRow(const std::vector<Row>& rows, Fn fn) {
    for (const Row& row : rows) runRow(std::string(row.name), [&] { fn(row); });
}

// ---- registration ----

using TestFunction = void (*)();
struct Registrar {
    Registrar(const char* suite, const char* name, TestFunction fn);
};
enum class HookKind { SuiteSetUp, EachTearDown };
struct HookRegistrar {
    HookRegistrar(const char* suite, HookKind kind, TestFunction fn);
};

std::string environment(const char* name);  // "" when unset

} // namespace weirtest

#define WEIR_TEST_CONCAT_(a, b) a##b
#define WEIR_TEST_CONCAT(a, b) WEIR_TEST_CONCAT_(a, b)

// WEIR_TEST(Suite, name) { body } registers the test "Suite.name".
#define WEIR_TEST(suite, name)                                                                  \
    static void weir_test_##suite##_##name();                                                   \
    static const ::weirtest::Registrar weir_test_registrar_##suite##_##name(#suite, #name,      \
                                                                            &weir_test_##suite##_##name); \
    static void weir_test_##suite##_##name()

// Runs once before the first selected test of the suite; a failure or skip
// there fails or skips every test of the suite.
#define WEIR_TEST_SUITE_SETUP(suite)                                                             \
    static void weir_test_setup_##suite();                                                       \
    static const ::weirtest::HookRegistrar weir_test_setup_registrar_##suite(                    \
        #suite, ::weirtest::HookKind::SuiteSetUp, &weir_test_setup_##suite);                     \
    static void weir_test_setup_##suite()

// Runs after every test of the suite, whether it passed or not.
#define WEIR_TEST_EACH_TEARDOWN(suite)                                                           \
    static void weir_test_teardown_##suite();                                                    \
    static const ::weirtest::HookRegistrar weir_test_teardown_registrar_##suite(                 \
        #suite, ::weirtest::HookKind::EachTearDown, &weir_test_teardown_##suite);                \
    static void weir_test_teardown_##suite()

#define WEIR_HERE ::weirtest::Location{__FILE__, __LINE__}

#define CHECK(cond) ::weirtest::verify(WEIR_HERE, #cond, static_cast<bool>(cond), false)
#define REQUIRE(cond) ::weirtest::verify(WEIR_HERE, #cond, static_cast<bool>(cond), true)
// The message is built only when the check fails.
#define CHECK_MSG(cond, msg)                                                                     \
    do {                                                                                         \
        if (static_cast<bool>(cond)) ::weirtest::passed();                                       \
        else ::weirtest::failed(WEIR_HERE, #cond, "  " + std::string(msg), false);               \
    } while (0)
#define REQUIRE_MSG(cond, msg)                                                                   \
    do {                                                                                         \
        if (static_cast<bool>(cond)) ::weirtest::passed();                                       \
        else ::weirtest::failed(WEIR_HERE, #cond, "  " + std::string(msg), true);                \
    } while (0)
#define CHECK_EQ(a, b) ::weirtest::compare(WEIR_HERE, #a, #b, (a), (b), false)
#define REQUIRE_EQ(a, b) ::weirtest::compare(WEIR_HERE, #a, #b, (a), (b), true)
#define CHECK_NE(a, b) ::weirtest::compareNot(WEIR_HERE, #a, #b, (a), (b), false)
#define REQUIRE_NE(a, b) ::weirtest::compareNot(WEIR_HERE, #a, #b, (a), (b), true)
#define CHECK_NEAR(a, b, tol) ::weirtest::near(WEIR_HERE, #a, #b, (a), (b), (tol), false)
#define REQUIRE_NEAR(a, b, tol) ::weirtest::near(WEIR_HERE, #a, #b, (a), (b), (tol), true)
#define FAIL(msg) ::weirtest::failed(WEIR_HERE, "FAIL", "  " + std::string(msg), true)
#define SKIP(reason) ::weirtest::skip(WEIR_HERE, std::string(reason))

// CHECK_THROWS(Type, expr): expr must throw Type (or a class derived from it).
#define WEIR_THROWS_(type, expr, fatal)                                                          \
    do {                                                                                         \
        bool weir_threw_ = false;                                                                \
        std::string weir_other_;                                                                 \
        try {                                                                                    \
            (void)(expr);                                                                        \
        } catch (const type&) {                                                                  \
            weir_threw_ = true;                                                                  \
        } catch (const ::weirtest::TestAborted&) {                                               \
            throw;                                                                               \
        } catch (const std::exception& e) {                                                      \
            weir_other_ = std::string("threw another exception: ") + e.what();                  \
        } catch (...) {                                                                          \
            weir_other_ = "threw something that is not a std::exception";                        \
        }                                                                                        \
        if (weir_threw_) ::weirtest::passed();                                                   \
        else ::weirtest::failed(WEIR_HERE, #expr " throws " #type,                               \
                                "  " + (weir_other_.empty() ? std::string("nothing was thrown") : weir_other_), fatal); \
    } while (0)
#define CHECK_THROWS(type, expr) WEIR_THROWS_(type, expr, false)
#define REQUIRE_THROWS(type, expr) WEIR_THROWS_(type, expr, true)
