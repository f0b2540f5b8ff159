// The runner's own pieces that every converted assertion relies on: the
// floating-point equality the Qt Test conversions kept, integer comparison
// across signedness, and the way values print in failure messages.
#include "tests/support/weir_test.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using weirtest::describe;
using weirtest::equalValues;
using weirtest::fuzzyEqual;

WEIR_TEST(WeirTest, floatsCompareRelativelyLikeQCompare) {
    CHECK(fuzzyEqual(1.0, 1.0 + 1e-13));
    CHECK(!fuzzyEqual(1.0, 1.0 + 1e-11));
    CHECK(fuzzyEqual(1.0f, 1.0f + 5e-6f));
    CHECK(!fuzzyEqual(1.0f, 1.0f + 1e-4f));
    CHECK(fuzzyEqual(0.0, 1e-13));    // near zero: both tiny
    CHECK(!fuzzyEqual(0.0, 1e-11));
    CHECK(fuzzyEqual(NAN, NAN));
    CHECK(!fuzzyEqual(1.0, double(NAN)));
    CHECK(fuzzyEqual(INFINITY, INFINITY));
    CHECK(!fuzzyEqual(-INFINITY, INFINITY));
    CHECK(!fuzzyEqual(std::numeric_limits<double>::max(), double(INFINITY)));
}

WEIR_TEST(WeirTest, integersCompareByValue) {
    CHECK(equalValues(size_t(3), 3));
    CHECK(!equalValues(uint64_t(std::numeric_limits<uint64_t>::max()), -1));  // no wrap-around
    CHECK(equalValues(std::string("a"), "a"));
    CHECK(equalValues(std::vector<int>{1, 2}, std::vector<int>{1, 2}));
    CHECK(!equalValues(std::vector<int>{1, 2}, std::vector<int>{2, 1}));
}

enum class Color { Red = 2 };

WEIR_TEST(WeirTest, valuesPrintReadably) {
    CHECK_EQ(describe(std::string("hi")), std::string("\"hi\""));
    CHECK_EQ(describe(uint8_t(200)), std::string("200"));
    CHECK_EQ(describe(true), std::string("true"));
    CHECK_EQ(describe(Color::Red), std::string("enum 2"));
    CHECK_EQ(describe(std::vector<int>{1, 2, 3}), std::string("[1, 2, 3]"));
    CHECK_EQ(describe(std::optional<int>()), std::string("(empty)"));
    CHECK_EQ(describe(0.1), std::string("0.10000000000000001"));
    CHECK_EQ(weirtest::hex(0x2a, 4), std::string("0x002a"));
    CHECK_EQ(weirtest::hex(0x12345, 2), std::string("0x12345"));
    CHECK_EQ(weirtest::str("x=", 3, " y=", 1.5f), std::string("x=3 y=1.5"));
}

WEIR_TEST(WeirTest, throwsChecksTheType) {
    CHECK_THROWS(std::runtime_error, throw std::runtime_error("boom"));
    CHECK_THROWS(std::exception, throw std::logic_error("derived"));
}
