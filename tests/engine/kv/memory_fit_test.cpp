// Pools that fit the device: an automatic full pool shrinks to the free
// memory (never below its floor); a pool asked for by size that does not fit
// is refused with the numbers and the largest size that would.
#include "tests/support/weir_test.h"

#include <string>

#include "weir/types/memory_fit.h"

using namespace weir;
using namespace weir::kv;

namespace {
PoolPlan plan(int64_t fullTokens, int64_t floor, int64_t windowTokens = 0) {
    PoolPlan p;
    p.pageSize = 16;
    p.fullTokens = fullTokens;
    p.fullFloor = floor;
    p.windowTokens = windowTokens;
    p.fullBytesPerToken = 1024;
    p.windowBytesPerToken = 512;
    return p;
}
constexpr uint64_t MiB = 1ull << 20;
} // namespace

WEIR_TEST(MemoryFit, poolsThatFitAreLeftAlone) {
    PoolPlan p = plan(4096, 1024, 1024);
    const MemoryFit f = fitPoolsToMemory(p, true, 64 * MiB, 1 * MiB, 1 * MiB, "x");
    CHECK(f.fits);
    CHECK(!f.shrunk);
    CHECK_EQ(p.fullTokens, int64_t(4096));
}

WEIR_TEST(MemoryFit, automaticFullPoolShrinksToWhatIsFree) {
    PoolPlan p = plan(1 << 20, 1024);  // 1 GiB asked, 16 MiB free
    const MemoryFit f = fitPoolsToMemory(p, true, 16 * MiB, 2 * MiB, 2 * MiB, "cuda:0 (Test GPU)");
    CHECK(f.fits);
    CHECK(f.shrunk);
    CHECK(p.fullTokens >= p.fullFloor);
    CHECK_EQ(p.fullTokens % 16, int64_t(0));
    CHECK(p.fullBytes() <= 12 * MiB);
    CHECK(p.fullBytes() > 11 * MiB);
}

WEIR_TEST(MemoryFit, aSizeAskedForThatDoesNotFitIsRefusedWithNumbers) {
    PoolPlan p = plan(1 << 20, 1024);
    const MemoryFit f = fitPoolsToMemory(p, false, 16 * MiB, 2 * MiB, 2 * MiB, "this machine's RAM");
    CHECK(!f.fits);
    CHECK_EQ(p.fullTokens, int64_t(1 << 20));  // untouched
    std::printf("  %s\n", f.message.c_str());
    CHECK_MSG(f.message.find("1024 MiB") != std::string::npos, f.message);
    CHECK_MSG(f.message.find("this machine's RAM has 16 MiB free") != std::string::npos, f.message);
    CHECK_MSG(f.message.find("--kv-reserve-tokens 12288") != std::string::npos, f.message);
}

WEIR_TEST(MemoryFit, belowTheFloorNothingFits) {
    PoolPlan p = plan(1 << 20, 1 << 19);
    const MemoryFit f = fitPoolsToMemory(p, true, 16 * MiB, 2 * MiB, 2 * MiB, "cuda:0 (Test GPU)");
    CHECK(!f.fits);
    CHECK_MSG(f.message.find("floor of 524288 tokens does not fit") != std::string::npos, f.message);
}

WEIR_TEST(MemoryFit, scratchCountsTheModelsShapes) {
    ModelConfig c;
    c.nEmbd = 640;
    c.nHead = 4;
    c.nHeadKv = 1;
    c.headDimK = c.headDimV = 256;
    c.nFf = 2048;
    c.nVocab = 262144;
    const uint64_t cpu = forwardScratchBytes(c, 512, 4, false), gpu = forwardScratchBytes(c, 512, 4, true);
    CHECK(cpu >= uint64_t(4) * 262144 * 4);  // the logits of 4 rows
    CHECK(gpu > cpu + uint64_t(262144) * 640 * 2 - 1);  // plus the head as f16
}
