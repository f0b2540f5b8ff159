#pragma once
// Shared by the kernel tests: the python-generated reference data
// (tests/reference/make_quant_reference.py) and random weight rows.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/ggml_types.h"
#include "weir/base/weight_view.h"
#include "tests/support/json_reading.h"
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

namespace weirtest {

using weir::kernels::GgmlType;

inline std::string quantDataDir() { return environment("WEIR_TEST_DATA") + "/quant"; }

struct QuantReference {
    std::string blob;
    Json manifest;
    bool ok = false;

    bool load() {
        const auto bin = readFile(quantDataDir() + "/reference.bin"), man = readFile(quantDataDir() + "/manifest.json");
        if (!bin || !man) return false;
        blob = *bin;
        manifest = parseJsonOrUndefined(*man);
        ok = !blob.empty() && manifest.isDict() && !manifest.asDict().entries.empty();
        return ok;
    }
    const uint8_t* at(int64_t offset) const { return reinterpret_cast<const uint8_t*>(blob.data()) + offset; }
    std::vector<float> floats(int64_t offset, int64_t count) const {
        std::vector<float> v(static_cast<size_t>(count));
        std::memcpy(v.data(), at(offset), size_t(count) * 4);
        return v;
    }
};

// Byte offsets of the f16 scale fields we keep finite and small in random blocks.
inline std::vector<int> scaleOffsets(GgmlType t) {
    switch (t) {
    case GgmlType::Q4_0: case GgmlType::Q5_0: case GgmlType::Q8_0: return {0};
    case GgmlType::Q4_1: case GgmlType::Q5_1: case GgmlType::Q4_K: case GgmlType::Q5_K: return {0, 2};
    case GgmlType::Q6_K: return {208};
    default: return {};
    }
}

// A random row of n elements of type t: uniform random bytes with small f16
// scales (either sign, 1e-4 .. 1e-1) for quants, normal values for floats.
inline std::vector<uint8_t> randomRow(GgmlType t, int64_t n, std::mt19937& rng) {
    using namespace weir::kernels;
    std::vector<uint8_t> row(rowBytes(t, n));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    if (t == GgmlType::F32) {
        for (int64_t i = 0; i < n; ++i) {
            const float v = normal(rng);
            std::memcpy(&row[size_t(i) * 4], &v, 4);
        }
        return row;
    }
    if (t == GgmlType::F16 || t == GgmlType::BF16) {
        for (int64_t i = 0; i < n; ++i) {
            const float v = normal(rng);
            const uint16_t h = t == GgmlType::F16 ? f32ToF16(v) : f32ToBf16(v);
            std::memcpy(&row[size_t(i) * 2], &h, 2);
        }
        return row;
    }
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : row) b = uint8_t(byte(rng));
    std::uniform_real_distribution<float> expo(-4.0f, -1.0f);
    const TypeTraits* tr = typeTraits(t);
    for (int64_t blk = 0; blk < n / tr->blockElems; ++blk) {
        for (int off : scaleOffsets(t)) {
            const float mag = std::pow(10.0f, expo(rng)) * (byte(rng) & 1 ? 1.0f : -1.0f);
            const uint16_t h = f32ToF16(mag);
            std::memcpy(&row[size_t(blk * tr->blockBytes + off)], &h, 2);
        }
    }
    return row;
}

// A K x N weight matrix of random rows (randomRow) and its view.
struct RandomMatrix {
    std::vector<uint8_t> bytes;
    weir::WeightView view;
};

inline RandomMatrix randomMatrix(GgmlType t, int64_t K, int64_t N, std::mt19937& rng) {
    RandomMatrix m;
    for (int64_t r = 0; r < N; ++r) {
        const auto row = randomRow(t, K, rng);
        m.bytes.insert(m.bytes.end(), row.begin(), row.end());
    }
    m.view = weir::WeightView{t, m.bytes.data(), K, N, weir::kernels::rowBytes(t, K)};
    return m;
}

inline const std::vector<GgmlType>& allTypes() {
    static const std::vector<GgmlType> types = {
        GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
        GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,
    };
    return types;
}

inline const char* typeName(GgmlType t) { return weir::kernels::typeTraits(t)->name; }

} // namespace weirtest
