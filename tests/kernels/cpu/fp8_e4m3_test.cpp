// FP8 E4M3 (e4m3fn) KV storage: the decoding of all 256 codes against the
// format's definition written out here, known constants, encoding as the
// nearest code (ties to even) against a brute-force search over every code,
// saturation, NaN, rows, and the dot product the attention kernel uses.
#include "tests/support/weir_test.h"

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/fp8_e4m3.h"

using namespace weir::kernels;

namespace {

// The definition: sign, 4-bit exponent with bias 7, 3-bit mantissa;
// exponent 0 is subnormal (m/8 * 2^-6); S.1111.111 is NaN; nothing is infinite.
double definition(int code) {
    const int s = code >> 7, e = (code >> 3) & 15, m = code & 7;
    if (e == 15 && m == 7) return NAN;
    const double mag = e == 0 ? (m / 8.0) * std::pow(2.0, -6) : (1.0 + m / 8.0) * std::pow(2.0, e - 7);
    return s ? -mag : mag;
}

// Nearest finite code by search; ties go to the code with an even mantissa.
int nearestCode(double x) {
    int best = -1;
    double bestDiff = INFINITY;
    for (int c = 0; c < 256; ++c) {
        const double v = definition(c);
        if (std::isnan(v)) continue;
        if (v == 0.0 && std::signbit(v) != std::signbit(x)) continue;  // keep the sign of zero
        const double d = std::fabs(v - x);
        if (d < bestDiff || (d == bestDiff && (c & 1) == 0)) {
            best = c;
            bestDiff = d;
        }
    }
    return best;
}

} // namespace

WEIR_TEST(Fp8E4M3, decodesEveryCodeAsDefined) {
    int nans = 0;
    for (int c = 0; c < 256; ++c) {
        const double want = definition(c);
        const float got = e4m3ToF32(uint8_t(c));
        if (std::isnan(want)) {
            REQUIRE(std::isnan(got));
            ++nans;
            continue;
        }
        REQUIRE_EQ(double(got), want);
    }
    REQUIRE_EQ(nans, 2);
    REQUIRE_EQ(e4m3ToF32(0x38), 1.0f);
    REQUIRE_EQ(e4m3ToF32(0x7E), 448.0f);
    REQUIRE_EQ(e4m3ToF32(0xC0), -2.0f);
    REQUIRE_EQ(e4m3ToF32(0x01), std::ldexp(1.0f, -9));  // smallest subnormal
    REQUIRE_EQ(e4m3ToF32(0x08), std::ldexp(1.0f, -6));  // smallest normal
}

WEIR_TEST(Fp8E4M3, encodesEveryCodeBackToItself) {
    for (int c = 0; c < 256; ++c) {
        const float v = e4m3ToF32(uint8_t(c));
        if (std::isnan(v)) continue;
        REQUIRE_EQ(int(f32ToE4M3(v)), c);
    }
}

WEIR_TEST(Fp8E4M3, encodesToTheNearestCode) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
    std::uniform_int_distribution<int> exp(-12, 9);
    for (int i = 0; i < 20000; ++i) {
        const float x = std::ldexp(mant(rng), exp(rng));
        const int want = nearestCode(x);
        REQUIRE_MSG(int(f32ToE4M3(x)) == want, weirtest::str("x=", x, " got ", int(f32ToE4M3(x)), " want ", want));
    }
    // Exact midpoints round to the even mantissa: 1 + 1/16 lies between 1 (m=0) and 1.125 (m=1).
    REQUIRE_EQ(int(f32ToE4M3(1.0625f)), 0x38);
    REQUIRE_EQ(int(f32ToE4M3(1.1875f)), 0x3A);  // between 1.125 (m=1) and 1.25 (m=2): to m=2
    REQUIRE_EQ(int(f32ToE4M3(std::ldexp(1.5f, -9))), 0x02);  // subnormal midpoint 1.5 * 2^-9 -> 2
}

WEIR_TEST(Fp8E4M3, saturatesAndKeepsNan) {
    REQUIRE_EQ(int(f32ToE4M3(1000.0f)), 0x7E);
    REQUIRE_EQ(int(f32ToE4M3(-1e30f)), 0xFE);
    REQUIRE_EQ(int(f32ToE4M3(INFINITY)), 0x7E);
    REQUIRE_EQ(int(f32ToE4M3(464.0f)), 0x7E);  // past the top: still the largest finite, never NaN
    REQUIRE_EQ(int(f32ToE4M3(NAN)), 0x7F);
    REQUIRE_EQ(int(f32ToE4M3(0.0f)), 0x00);
    REQUIRE_EQ(int(f32ToE4M3(-0.0f)), 0x80);
    REQUIRE_EQ(int(f32ToE4M3(std::ldexp(1.0f, -11))), 0x00);  // below half the smallest subnormal
}

WEIR_TEST(Fp8E4M3, rowsAndDot) {
    std::mt19937 rng(5);
    std::normal_distribution<float> g(0.0f, 2.0f);
    const int n = 256;
    std::vector<float> x(n), q(n), back(n);
    for (int i = 0; i < n; ++i) {
        x[size_t(i)] = g(rng);
        q[size_t(i)] = g(rng);
    }
    std::vector<uint8_t> row(n);
    toE4M3Row(x.data(), row.data(), n);
    fromE4M3Row(row.data(), back.data(), n);
    double exact = 0, stored = 0;
    for (int i = 0; i < n; ++i) {
        REQUIRE_EQ(row[size_t(i)], f32ToE4M3(x[size_t(i)]));
        // 3 mantissa bits: within half a step, 1/16 relative, of the input.
        REQUIRE(std::fabs(back[size_t(i)] - x[size_t(i)]) <= std::fabs(x[size_t(i)]) / 16.0f + std::ldexp(1.0f, -10));
        exact += double(x[size_t(i)]) * q[size_t(i)];
        stored += double(back[size_t(i)]) * q[size_t(i)];
    }
    REQUIRE(std::fabs(dotE4M3(row.data(), q.data(), n) - stored) < 1e-3 * (1.0 + std::fabs(stored)));
    REQUIRE(std::fabs(stored - exact) < 0.05 * std::sqrt(double(n)) * 4.0);  // rounding noise, not a wrong row
}
