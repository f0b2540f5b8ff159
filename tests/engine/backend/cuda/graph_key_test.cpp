// Which steps the CUDA backend captures and replays as graphs.
#include "tests/support/weir_test.h"

#include <unordered_set>
#include <vector>

#include "engine/backend/cuda/graph_key.h"

using namespace weir;
using weir::cudabackend::GraphKey;
using weir::cudabackend::graphable;
using weir::cudabackend::graphKey;
using weir::cudabackend::GraphKeyHash;
using weir::cudabackend::kMaxGraphTokens;

WEIR_TEST(CudaGraphKey, decodeStepsOfOneShapeShareAKey) {
    Batch a, b;
    a.add(10, 1, 100, true);
    a.add(11, 2, 7, true);
    b.add(99, 5, 3000, true);  // other sequences, tokens and positions
    b.add(98, 4, 1, true);
    const std::vector<int32_t> out{0, 1};
    const GraphKey ka = graphKey(a, out), kb = graphKey(b, out);
    CHECK(ka == kb);
    CHECK_EQ(ka.tokens, 2);
    CHECK_EQ(ka.outputs, 2);
    CHECK(ka.decodeOnly);
    CHECK(graphable(ka));
    CHECK_EQ(GraphKeyHash()(ka), GraphKeyHash()(kb));
}

WEIR_TEST(CudaGraphKey, outputsAndTokensSeparateKeys) {
    Batch a;
    a.add(1, 1, 5, true);
    a.add(2, 2, 5, false);
    const std::vector<int32_t> one{0}, two{0, 1};
    CHECK(!(graphKey(a, one) == graphKey(a, two)));
    Batch b;
    b.add(1, 1, 5, true);
    CHECK(!(graphKey(b, one) == graphKey(a, one)));
    std::unordered_set<GraphKey, GraphKeyHash> keys{graphKey(a, one), graphKey(a, two), graphKey(b, one)};
    CHECK_EQ(keys.size(), size_t(3));
}

WEIR_TEST(CudaGraphKey, prefillIsNotReplayed) {
    Batch p;
    p.add(1, 3, 0, false);
    p.add(2, 3, 1, false);
    p.add(3, 3, 2, true);
    const std::vector<int32_t> out{2};
    const GraphKey k = graphKey(p, out);
    CHECK(!k.decodeOnly);
    CHECK(!graphable(k));
    // Mixed: a decode token beside a prefill chunk.
    Batch m;
    m.add(1, 4, 90, true);
    m.add(2, 3, 0, false);
    m.add(3, 3, 1, true);
    const std::vector<int32_t> mo{0, 2};
    CHECK(!graphKey(m, mo).decodeOnly);
}

WEIR_TEST(CudaGraphKey, largeAndEmptyStepsAreNotReplayed) {
    Batch big;
    for (int32_t i = 0; i <= kMaxGraphTokens; ++i) big.add(1, i, 0, true);
    std::vector<int32_t> out;
    for (int32_t i = 0; i <= kMaxGraphTokens; ++i) out.push_back(i);
    const GraphKey k = graphKey(big, out);
    CHECK(k.decodeOnly);
    CHECK(!graphable(k));
    out.pop_back();
    Batch fits;
    for (int32_t i = 0; i < kMaxGraphTokens; ++i) fits.add(1, i, 0, true);
    CHECK(graphable(graphKey(fits, out)));
    Batch none;
    CHECK(!graphable(graphKey(none, {})));
}
