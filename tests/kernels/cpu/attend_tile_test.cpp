// attendTile against attendHead: the tile kernel must give every query the
// same bits, for tiles of several shapes whose queries have different ranges
// (causal, sliding window, empty), over rows on scrambled pages of 1 and 16.
#include "tests/support/paged_store.h"
#include "tests/support/weir_test.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/attend_tile.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/ops.h"

using namespace weir::kernels;
using weirtest::PagedStore;

namespace {

std::vector<float> randomVec(size_t n, std::mt19937& rng, float scale) {
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}


struct TileRow {
    std::string name;
    int64_t dk, dv;
    int heads;        // query heads of the group (one KV head)
    int tokens;       // consecutive tokens of the tile
    int32_t window;   // 0: causal only
    int32_t pageSize;
    bool lanes16;     // the AVX-512 build's dot order
    bool avx512;      // the kernel built with AVX-512's registers (vnniActive)
};

struct ResetKernelPathOnExit {
    ~ResetKernelPathOnExit() { resetKernelPath(); }
};

} // namespace

WEIR_TEST(AttendTile, equalsAttendHeadBitForBit) {
    std::vector<TileRow> table;
    for (bool avx512 : {true, false}) {
        for (bool lanes16 : {true, false}) {
            const std::string order = std::string(avx512 ? "-avx512" : "-avx2") + (lanes16 ? "-lanes16" : "-lanes8");
            for (int32_t ps : {1, 16}) {
                const std::string page = "-page" + std::to_string(ps);
                table.push_back({"gemma-window" + page + order, 256, 256, 4, 9, 24, ps, lanes16, avx512});
                table.push_back({"gemma-decode" + page + order, 256, 256, 4, 1, 0, ps, lanes16, avx512});
                table.push_back({"smollm-causal" + page + order, 64, 64, 3, 7, 0, ps, lanes16, avx512});
                table.push_back({"narrow-v-window" + page + order, 128, 96, 2, 9, 11, ps, lanes16, avx512});
                table.push_back({"wide-v" + page + order, 64, 384, 2, 3, 0, ps, lanes16, avx512});
                table.push_back({"over-one-tile" + page + order, 64, 32, 4, 20, 0, ps, lanes16, avx512});  // 80 queries
            }
        }
    }
    weirtest::eachRow(table, [](const TileRow& row) {
        if (bestKernelPath() != KernelPath::Avx2) SKIP("no AVX2 on this CPU");
        const ResetKernelPathOnExit restore;
        if (row.avx512 && !forceVnni(true)) SKIP("no AVX-512 VNNI on this CPU");
        REQUIRE(forceVnni(row.avx512));
        REQUIRE(forceAvx512Variants(row.lanes16));
        REQUIRE(attendTileIsTiled(GgmlType::F16, GgmlType::F16, row.dk, row.dv));
        std::mt19937 rng(uint32_t(row.dk * 131 + row.dv * 7 + row.tokens + row.pageSize + row.lanes16));
        const int64_t nKvHead = 2, kvHead = 1;  // the tile reads the second KV head of each row
        const int32_t firstPos = 40, nPos = firstPos + row.tokens;
        PagedStore ks(GgmlType::F16, row.dk * nKvHead, nPos, row.pageSize), vs(GgmlType::F16, row.dv * nKvHead, nPos, row.pageSize);
        for (int32_t p = 0; p < nPos; ++p) {
            // Growing scale along the positions: new maxima keep appearing late.
            const auto kv = randomVec(size_t(row.dk * nKvHead), rng, 0.5f + 0.05f * float(p));
            const auto vv = randomVec(size_t(row.dv * nKvHead), rng, 2.0f);
            REQUIRE(storeKvRow(GgmlType::F16, kv.data(), ks.row(p), row.dk * nKvHead));
            REQUIRE(storeKvRow(GgmlType::F16, vv.data(), vs.row(p), row.dv * nKvHead));
        }
        const PagedRows kr = ks.view(size_t(kvHead * row.dk * 2)), vr = vs.view(size_t(kvHead * row.dv * 2));

        const int n = row.tokens * row.heads;
        std::vector<float> q = randomVec(size_t(n * row.dk), rng, 1.0f);
        std::vector<AttendQuery> queries(static_cast<size_t>(n));
        for (int t = 0; t < row.tokens; ++t) {
            const int32_t pos = firstPos + t;
            for (int h = 0; h < row.heads; ++h) {
                AttendQuery& a = queries[size_t(t * row.heads + h)];
                a.q = q.data() + size_t(t * row.heads + h) * size_t(row.dk);
                a.first = row.window ? std::max(0, pos - row.window + 1) : 0;
                a.last = pos;
            }
        }
        if (n > 3) {
            queries[1].first = queries[1].last = firstPos - 3;  // one position, inside a block
            queries[2].first = 17, queries[2].last = 16;        // no position: output 0
        }
        std::vector<float> tileOut(size_t(n * row.dv), -1.0f), headOut(size_t(n * row.dv), -2.0f);
        for (int i = 0; i < n; ++i) queries[size_t(i)].out = tileOut.data() + size_t(i) * size_t(row.dv);
        std::vector<float> scratch(attendTileScratchFloats(row.dk, row.dv));
        const float scale = 0.125f;
        attendTile(queries.data(), n, row.dk, row.dv, kr, vr, scale, scratch.data());
        for (int i = 0; i < n; ++i) {
            const AttendQuery& a = queries[size_t(i)];
            attendHead(a.q, row.dk, row.dv, kr, vr, a.first, a.last, scale, headOut.data() + size_t(i) * size_t(row.dv),
                       scratch.data());
        }
        for (int i = 0; i < n; ++i) {
            const float* x = tileOut.data() + size_t(i) * size_t(row.dv);
            const float* y = headOut.data() + size_t(i) * size_t(row.dv);
            REQUIRE_MSG(std::memcmp(x, y, size_t(row.dv) * 4) == 0,
                        weirtest::str("query ", i, " [", queries[size_t(i)].first, ",", queries[size_t(i)].last,
                                      "]: first value ", x[0], " vs ", y[0]));
        }
        if (n > 3) for (int64_t e = 0; e < row.dv; ++e) REQUIRE_EQ(tileOut[size_t(2 * row.dv + e)], 0.0f);
    });
}

// Types the tile kernel does not take go through attendHead, query by query.
WEIR_TEST(AttendTile, otherTypesFallBackToAttendHead) {
    REQUIRE(!attendTileIsTiled(GgmlType::Q8_0, GgmlType::Q8_0, 64, 64));
    REQUIRE(!attendTileIsTiled(GgmlType::F32, GgmlType::F32, 64, 64));
    REQUIRE(!attendTileIsTiled(GgmlType::F16, GgmlType::F16, 64, 48));
    const ResetKernelPathOnExit restore;
    REQUIRE(forceKernelPath(KernelPath::Scalar));
    REQUIRE(!attendTileIsTiled(GgmlType::F16, GgmlType::F16, 256, 256));
    std::mt19937 rng(7);
    const int64_t dk = 64, dv = 64;
    PagedStore ks(GgmlType::F16, dk, 20, 16), vs(GgmlType::F16, dv, 20, 16);
    for (int32_t p = 0; p < 20; ++p) {
        const auto kv = randomVec(size_t(dk), rng, 1.0f), vv = randomVec(size_t(dv), rng, 1.0f);
        REQUIRE(storeKvRow(GgmlType::F16, kv.data(), ks.row(p), dk));
        REQUIRE(storeKvRow(GgmlType::F16, vv.data(), vs.row(p), dv));
    }
    const auto q = randomVec(size_t(3 * dk), rng, 1.0f);
    std::vector<float> tileOut(size_t(3 * dv)), headOut(size_t(3 * dv)), scratch(attendTileScratchFloats(dk, dv));
    AttendQuery queries[3];
    for (int i = 0; i < 3; ++i) {
        queries[i].q = q.data() + i * dk;
        queries[i].out = tileOut.data() + i * dv;
        queries[i].first = i;
        queries[i].last = 17 + i;
    }
    attendTile(queries, 3, dk, dv, ks.view(0), vs.view(0), 0.125f, scratch.data());
    for (int i = 0; i < 3; ++i) {
        attendHead(queries[i].q, dk, dv, ks.view(0), vs.view(0), queries[i].first, queries[i].last, 0.125f,
                   headOut.data() + i * dv, scratch.data());
        REQUIRE(std::memcmp(tileOut.data() + i * dv, headOut.data() + i * dv, size_t(dv) * 4) == 0);
    }
}
