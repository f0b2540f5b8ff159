#pragma once
// Tensor element types as numbered in the GGUF format (ggml type ids) and
// their block geometry: shared by every backend (CPU and CUDA kernels) and
// the engine that hands them weights.
#include <cstddef>
#include <cstdint>

namespace weir {

enum class GgmlType : uint32_t {
    F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
    Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, BF16 = 30,
    // Weir's own, for KV-cache rows only (never a GGUF tensor type): FP8 E4M3
    // (kernels/cpu/fp8_e4m3.h). typeTraits() does not know it.
    E4M3_KV = 0x10000,
};

struct TypeTraits {
    const char* name;     // "Q4_K"
    int64_t blockElems;   // elements per block (1 for plain types)
    int64_t blockBytes;   // bytes per block
    bool supported;       // the kernels can dequantize and multiply it
};

// Traits of a ggml type id, or nullptr for an id we do not know at all.
// Sizes from the GGUF block layouts.
inline const TypeTraits* typeTraits(uint32_t type) {
    static constexpr TypeTraits f32{"F32", 1, 4, true}, f16{"F16", 1, 2, true}, bf16{"BF16", 1, 2, true},
        q4_0{"Q4_0", 32, 18, true}, q4_1{"Q4_1", 32, 20, true}, q5_0{"Q5_0", 32, 22, true},
        q5_1{"Q5_1", 32, 24, true}, q8_0{"Q8_0", 32, 34, true}, q8_1{"Q8_1", 32, 36, false},
        q2_k{"Q2_K", 256, 84, false}, q3_k{"Q3_K", 256, 110, false}, q4_k{"Q4_K", 256, 144, true},
        q5_k{"Q5_K", 256, 176, true}, q6_k{"Q6_K", 256, 210, true}, q8_k{"Q8_K", 256, 292, false},
        iq4_nl{"IQ4_NL", 32, 18, false}, iq4_xs{"IQ4_XS", 256, 136, false};
    switch (type) {
    case 0: return &f32;
    case 1: return &f16;
    case 2: return &q4_0;
    case 3: return &q4_1;
    case 6: return &q5_0;
    case 7: return &q5_1;
    case 8: return &q8_0;
    case 9: return &q8_1;
    case 10: return &q2_k;
    case 11: return &q3_k;
    case 12: return &q4_k;
    case 13: return &q5_k;
    case 14: return &q6_k;
    case 15: return &q8_k;
    case 20: return &iq4_nl;
    case 23: return &iq4_xs;
    case 30: return &bf16;
    default: return nullptr;
    }
}
inline const TypeTraits* typeTraits(GgmlType t) { return typeTraits(static_cast<uint32_t>(t)); }

// Bytes taken by a row of n elements (0 unless n is a multiple of blockElems).
inline size_t rowBytes(GgmlType type, int64_t n) {
    const TypeTraits* t = typeTraits(type);
    if (!t || n % t->blockElems != 0) return 0;
    return size_t(n / t->blockElems) * size_t(t->blockBytes);
}

} // namespace weir
