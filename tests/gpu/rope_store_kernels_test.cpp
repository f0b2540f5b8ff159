// RoPE, query scaling and the K/V store into a paged cache, against
// kernels::ropeAngles/ropeApply/scaleInPlace and kernels::storeKvRow.
#include "tests/gpu/gpu_test_util.h"

#include <cmath>
#include <cstdio>

#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/ops.h"
#include "kernels/cuda/rope_store.h"

using namespace weirtest;
using weir::kernels::GgmlType;

namespace {

struct RopeCase {
    const char* name;
    bool neox;
    int32_t headDim, nRot;
    float base, freqScale;
    bool factors;
};

size_t kvRowBytesOf(GgmlType t, int64_t elems) {
    switch (t) {
    case GgmlType::F16: return size_t(elems) * 2;
    case GgmlType::Q8_0: return size_t(elems / 32) * 34;
    case GgmlType::F32: return size_t(elems) * 4;
    default: return size_t(elems);
    }
}

const char* kvName(GgmlType t) {
    switch (t) {
    case GgmlType::F16: return "f16";
    case GgmlType::Q8_0: return "q8_0";
    case GgmlType::F32: return "f32";
    default: return "fp8_e4m3";
    }
}

} // namespace

// q and k: the CPU's angles to the f32 bit (same stepping), cosf/sinf within
// 2 ulp of glibc's: |gpu - cpu| <= 4e-6 * max |head value|. K/V rows: the
// bytes the CPU's storeKvRow writes for the same (GPU-rotated) values,
// exactly; every other row of the pool untouched.
WEIR_TEST(CudaRopeStore, matchesCpuAndStoresExactRows) {
    REQUIRE_CUDA_DEVICE();
    const std::vector<RopeCase> ropes = {
        {"neox, full rotation", true, 64, 64, 10000.0f, 1.0f, false},
        {"adjacent pairs, half rotated, factors, scaled", false, 128, 64, 500000.0f, 0.25f, true},
        {"neox, head 256", true, 256, 256, 1000000.0f, 1.0f, false},
    };
    const std::vector<int32_t> positions{0, 1, 17, 300, 4097, 8191};
    const int64_t n = int64_t(positions.size());
    const int32_t nHead = 4, nHeadKv = 2, pageSize = 16, poolPages = 700;
    for (const RopeCase& rc : ropes) {
        for (GgmlType kvt : {GgmlType::F16, GgmlType::Q8_0, GgmlType::F32, GgmlType::E4M3_KV}) {
            const int32_t hd = rc.headDim;
            const int64_t qDim = nHead * hd, kDim = nHeadKv * hd;
            const auto q = randomFloats(size_t(n * qDim), 1, 2.0f), k = randomFloats(size_t(n * kDim), 2, 2.0f),
                       v = randomFloats(size_t(n * kDim), 3, 2.0f);
            std::vector<float> factors(size_t(rc.nRot / 2));
            for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + float(i % 5);
            // Each token its own sequence: a table of -1 except the page of its
            // position, pages scattered over the pool. meta = positions (n words),
            // table offsets (n), tables.
            std::vector<int32_t> all(positions);
            all.resize(size_t(2 * n));
            std::vector<int32_t> pageOf;
            for (int64_t i = 0; i < n; ++i) {
                all[size_t(n + i)] = int32_t(all.size());
                const int32_t entries = positions[size_t(i)] / pageSize + 1;
                const int32_t page = int32_t((i * 97 + 13) % poolPages);
                pageOf.push_back(page);
                for (int32_t e = 0; e < entries; ++e) all.push_back(e == entries - 1 ? page : -1);
            }
            const size_t kvRow = kvRowBytesOf(kvt, kDim);
            const size_t poolBytes = size_t(poolPages) * pageSize * kvRow;
            DeviceBytes dq(q), dk(k), dv(v), dmeta(all), dfac(factors), kPool(poolBytes, 0xAB), vPool(poolBytes, 0xAB);
            weir::cuda::RopeSpec rope{rc.neox, rc.nRot, rc.base, rc.freqScale, rc.factors ? dfac.as<float>() : nullptr};
            weir::cuda::PagedKvStore store{kPool.as<uint8_t>(), vPool.as<uint8_t>(), kvt, kvRow, pageSize};
            weir::cuda::TokenTables tables{dmeta.as<int32_t>(), dmeta.as<int32_t>() + n};
            const float qScale = 0.125f;
            weir::cuda::ropeAndStore(dq.as<float>(), dk.as<float>(), dv.as<float>(), n, nHead, nHeadKv, hd, hd, rope, qScale,
                                     dmeta.as<int32_t>(), tables, store, nullptr);
            const auto gq = dq.read<float>(), gk = dk.read<float>();
            const auto kp = kPool.read<uint8_t>(), vp = vPool.read<uint8_t>();

            double worst = 0.0;
            std::vector<float> cs(size_t(rc.nRot)), rq(q), rk(k);
            weir::kernels::RopeParams p;
            p.neox = rc.neox;
            p.nRot = rc.nRot;
            p.base = rc.base;
            p.freqScale = rc.freqScale;
            p.freqFactors = rc.factors ? factors.data() : nullptr;
            std::vector<uint8_t> want(kvRow);
            std::vector<bool> written(size_t(poolPages) * pageSize, false);
            for (int64_t i = 0; i < n; ++i) {
                weir::kernels::ropeAngles(p, positions[size_t(i)], cs.data());
                weir::kernels::ropeApply(rq.data() + i * qDim, nHead, hd, rc.nRot, rc.neox, cs.data());
                weir::kernels::ropeApply(rk.data() + i * kDim, nHeadKv, hd, rc.nRot, rc.neox, cs.data());
                weir::kernels::scaleInPlace(rq.data() + i * qDim, qScale, qDim);
                float big = 0.0f;
                for (int64_t j = 0; j < qDim; ++j) big = std::max(big, std::fabs(q[size_t(i * qDim + j)]));
                for (int64_t j = 0; j < qDim; ++j) {
                    const double err = std::fabs(double(gq[size_t(i * qDim + j)]) - rq[size_t(i * qDim + j)]);
                    CHECK_MSG(err <= 4e-6 * big * qScale, str(rc.name, " q token ", i, " elem ", j, ": ", gq[size_t(i * qDim + j)],
                                                              " vs ", rq[size_t(i * qDim + j)]));
                    worst = std::max(worst, err / (4e-6 * big * qScale));
                }
                float bigK = 0.0f;
                for (int64_t j = 0; j < kDim; ++j) bigK = std::max(bigK, std::fabs(k[size_t(i * kDim + j)]));
                for (int64_t j = 0; j < kDim; ++j) {
                    const double err = std::fabs(double(gk[size_t(i * kDim + j)]) - rk[size_t(i * kDim + j)]);
                    CHECK_MSG(err <= 4e-6 * bigK, str(rc.name, " k token ", i, " elem ", j, ": ", gk[size_t(i * kDim + j)],
                                                       " vs ", rk[size_t(i * kDim + j)]));
                }
                const int64_t row = int64_t(pageOf[size_t(i)]) * pageSize + positions[size_t(i)] % pageSize;
                written[size_t(row)] = true;
                REQUIRE(weir::kernels::storeKvRow(kvt, gk.data() + i * kDim, want.data(), kDim));
                CHECK_MSG(std::memcmp(kp.data() + size_t(row) * kvRow, want.data(), kvRow) == 0,
                          str(rc.name, " ", kvName(kvt), ": K row of token ", i, " differs from storeKvRow's"));
                REQUIRE(weir::kernels::storeKvRow(kvt, v.data() + i * kDim, want.data(), kDim));
                CHECK_MSG(std::memcmp(vp.data() + size_t(row) * kvRow, want.data(), kvRow) == 0,
                          str(rc.name, " ", kvName(kvt), ": V row of token ", i, " differs from storeKvRow's"));
            }
            size_t touched = 0;
            for (size_t r = 0; r < written.size(); ++r) {
                if (written[r]) continue;
                for (size_t b = 0; b < kvRow; ++b)
                    if (kp[r * kvRow + b] != 0xAB || vp[r * kvRow + b] != 0xAB) ++touched;
            }
            CHECK_EQ(touched, size_t(0));
            std::printf("  %-45s %-8s worst q error %.3f of the bound\n", rc.name, kvName(kvt), worst);
        }
    }
}

WEIR_TEST(CudaRopeStore, releasedPageIsNotWritten) {
    REQUIRE_CUDA_DEVICE();
    // One token whose page entry is -1: nothing stored, q and k still rotated.
    const int32_t hd = 64;
    const auto q = randomFloats(size_t(hd), 5), k = randomFloats(size_t(hd), 6), v = randomFloats(size_t(hd), 7);
    const std::vector<int32_t> meta{20, 2, -1, -1};  // position 20; table at word 2: pages -1, -1
    DeviceBytes dq(q), dk(k), dv(v), dmeta(meta), kPool(size_t(64) * hd * 2, 0xAB), vPool(size_t(64) * hd * 2, 0xAB);
    weir::cuda::RopeSpec rope{true, hd, 10000.0f, 1.0f, nullptr};
    weir::cuda::PagedKvStore store{kPool.as<uint8_t>(), vPool.as<uint8_t>(), GgmlType::F16, size_t(hd) * 2, 16};
    weir::cuda::ropeAndStore(dq.as<float>(), dk.as<float>(), dv.as<float>(), 1, 1, 1, hd, hd, rope, 0.0f, dmeta.as<int32_t>(),
                             {dmeta.as<int32_t>(), dmeta.as<int32_t>() + 1}, store, nullptr);
    for (uint8_t b : kPool.read<uint8_t>()) CHECK_EQ(b, uint8_t(0xAB));
    for (uint8_t b : vPool.read<uint8_t>()) CHECK_EQ(b, uint8_t(0xAB));
    CHECK(dq.read<float>() != q);  // rotated all the same
}
