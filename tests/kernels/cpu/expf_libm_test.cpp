// The attention softmax's vector exp (expf_libm_simd.h) against std::exp, bit
// for bit, in both builds of the tile kernel: every 61st float from -104 to
// 104 (what a softmax meets and beyond: 35 million arguments), the special
// cases glibc takes apart, and the run-time check that switches it on.
#include "tests/support/weir_test.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/attend_tile_simd.h"
#include "kernels/cpu/cpu_features.h"

using namespace weir::kernels;

namespace {

using Exp8 = void (*)(const float*, float*);

// Arguments that differ from std::exp's result, first few.
std::string mismatches(Exp8 exp8, const std::vector<float>& args, int64_t& count) {
    std::string first;
    count = 0;
    float got[8];
    for (size_t i = 0; i + 8 <= args.size(); i += 8) {
        exp8(args.data() + i, got);
        for (int j = 0; j < 8; ++j) {
            const float want = std::exp(args[i + size_t(j)]);
            if (std::memcmp(&got[j], &want, 4) != 0 && !(std::isnan(got[j]) && std::isnan(want))) {
                if (++count <= 3) first += weirtest::str(" exp(", args[i + size_t(j)], ") = ", got[j], " not ", want, ";");
            }
        }
    }
    return first;
}

struct Build {
    const char* name;
    Exp8 exp8;
    bool (*matches)();
    bool available;
};

std::vector<Build> builds() {
    return {{"avx2", attend_avx2::exp8, attend_avx2::expMatchesLibm, bestKernelPath() == KernelPath::Avx2},
            {"avx512", attend_avx512::exp8, attend_avx512::expMatchesLibm, forceVnni(true)}};
}

} // namespace

WEIR_TEST(ExpfLibm, sweepMatchesStdExpBitForBit) {
    std::vector<float> args;
    for (uint32_t bits = 0; bits < 0x42d00000u; bits += 61) {
        float v;
        std::memcpy(&v, &bits, 4);
        args.push_back(-v);
        args.push_back(v);
    }
    while (args.size() % 8) args.push_back(0.0f);
    for (const Build& b : builds()) {
        if (!b.available) {
            std::printf("  %s: SKIPPED (not on this CPU)\n", b.name);
            continue;
        }
        int64_t count = 0;
        const std::string first = mismatches(b.exp8, args, count);
        std::printf("  %s: %zu arguments, %lld differ\n", b.name, args.size(), static_cast<long long>(count));
        REQUIRE_MSG(count == 0, weirtest::str(b.name, ":", first));
    }
    resetKernelPath();
}

WEIR_TEST(ExpfLibm, specialCasesMatch) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> args = {-inf, inf, nan, -0.0f, 0.0f, 1e-45f, -1e-45f, 88.7228317f, 88.7228394f, 89.0f,
                               -87.33654f, -88.0f, -103.2789f, -103.27893f, -103.972076f, -103.97208f, -104.0f,
                               -200.0f, 3e38f, -3e38f, -inf - 1.0f, -std::numeric_limits<float>::denorm_min(),
                               std::numeric_limits<float>::min(), -std::numeric_limits<float>::max()};
    while (args.size() % 8) args.push_back(-1.0f);
    for (const Build& b : builds()) {
        if (!b.available) continue;
        int64_t count = 0;
        const std::string first = mismatches(b.exp8, args, count);
        REQUIRE_MSG(count == 0, weirtest::str(b.name, ":", first));
    }
    resetKernelPath();
}

// On this system (glibc) the check must find the match, or the softmax would
// quietly fall back to one std::exp per position.
WEIR_TEST(ExpfLibm, runTimeCheckSwitchesTheVectorPathOn) {
    for (const Build& b : builds()) {
        if (!b.available) continue;
        REQUIRE_MSG(b.matches(), weirtest::str(b.name, ": the vector exp does not match this libm's expf"));
    }
    resetKernelPath();
}
