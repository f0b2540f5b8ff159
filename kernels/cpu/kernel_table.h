#pragma once
// Internal: the per-type pieces matmul(), dequantizeRow() and dotRowF32() are
// assembled from. Each weight type has a dequantizer, an activation format
// (what llama.cpp's CPU backend converts the f32 input to before multiplying),
// and a row-dot kernel per implementation path.
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/ggml_types.h"

namespace weir::kernels::detail {

// Converts n elements (a multiple of the block size) of a stored row to f32.
using DequantizeFn = void (*)(const void* src, float* dst, int64_t n);

// Converts an f32 row of n elements to the activation format.
using ConvertRowFn = void (*)(const float* x, void* dst, int64_t n);

// Bytes one converted activation row of n elements takes in matmul's buffer.
// For Q8_0 and Q8_1 the blocks are followed (at a 32-byte aligned offset) by
// their scales as f32: d[nb], then s[nb] for Q8_1, so kernels need no f16
// conversion per block and row. Other formats are stored as-is.
size_t actRowBytes(GgmlType actType, int64_t n);
size_t actScalesOffset(int64_t nBlocks, size_t blockBytes);

// Dot products of one weight row (k elements) with nx activation rows (1 to
// kMaxDotRows, or avx2MaxDotRows(type) for the AVX2 kernels):
// out[j * outStride] = <w, act_j> where act_j starts at act + j * actStride bytes.
// Reading the weight row once for several activation rows is what makes a
// batched matmul compute-bound instead of memory-bound.
using RowDotFn = void (*)(const void* w, const void* act, size_t actStride, int nx, int64_t k,
                          float* out, size_t outStride);

// The same for two weight rows at once, w and w + wStride bytes:
// out[j * outStride] = <w, act_j>, out[j * outStride + 1] = <w + wStride, act_j>.
using PairDotFn = void (*)(const void* w, size_t wStride, const void* act, size_t actStride, int nx, int64_t k,
                           float* out, size_t outStride);

constexpr int kMaxDotRows = 4;        // every kernel takes this many
constexpr int kMaxLegacyDotRows = 8;  // the AVX2 Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 kernels take this many
constexpr int kMaxVnniDotRows = 16;   // and their AVX-512 VNNI variants this many
// Kernels called with at most this many activation rows wait on weights
// from memory (decode, a few sequences at once) and prefetch them
// (prefetchWeights in simd_avx2.h); with more rows they are compute-bound.
constexpr int kPrefetchMaxRows = 4;

struct TypeOps {
    DequantizeFn dequantize;
    GgmlType actType;      // F32, F16, BF16, Q8_0, Q8_1 or Q8_K
    ConvertRowFn convert;  // f32 -> actType
    RowDotFn dotScalar;    // portable kernel
};

// Ops for a weight type, or nullptr if we cannot multiply it.
const TypeOps* typeOps(GgmlType type);

// The AVX2+FMA+F16C kernel for a weight type, or nullptr. Only call the
// result when the AVX2 path is active (cpu_features.h).
RowDotFn avx2Dot(GgmlType type);
// The AVX-512 VNNI variant of the legacy kernels (same results), or nullptr.
RowDotFn avx512DotLegacy(GgmlType type);
// The two-weight-row AVX-512 VNNI kernel for Q4_0/Q5_0/Q8_0 (same results
// as avx512DotLegacy row by row), or nullptr. Only call when vnniActive();
// takes up to kMaxVnniDotRows activation rows.
// Its activation rows are Q8_0 rows (actRowBytes) followed, from
// pairCorrectionsOffset(k), by pairCorrectionsBytes(k) of per-block integer
// corrections for the weight type, which avx512PairCorrections writes.
PairDotFn avx512PairDotLegacy(GgmlType type);
void avx512PairCorrections(GgmlType type, const void* actRow, int64_t k, void* dst);
// The same kernel reading weight pairs unpacked once per matmul: pairs
// [pairBegin, pairEnd) (rows 2p and 2p + 1 of a matrix with rows at rowStride)
// are written to dst at avx512PackedPairBytes(k) per pair, and the kernel takes
// a packed pair as w (wStride unused).
size_t avx512PackedPairBytes(int64_t k);
void avx512PackPairs(GgmlType type, const void* w, size_t rowStride, int64_t k, int64_t pairBegin, int64_t pairEnd,
                     void* dst);
PairDotFn avx512PackedPairDot();
// The same packed layout with signed weights, and the kernel for it, whose
// activation rows are plain Q8_0 rows (actRowBytes, no corrections) with
// their bytes biased by +128 (avx512BiasActivations, after converting).
void avx512PackPairsSigned(GgmlType type, const void* w, size_t rowStride, int64_t k, int64_t pairBegin, int64_t pairEnd,
                           void* dst);
PairDotFn avx512SignedPackedPairDot();
void avx512BiasActivations(void* actRow, int64_t k);
size_t pairCorrectionsOffset(int64_t k);
size_t pairCorrectionsBytes(int64_t k);
// Weights packed at load 16 rows at a time (weight_tiles.h), for the
// AVX-512 VNNI tile kernel (quant_tiles_avx512.cpp; only call when
// vnniActive()): avx512TileBytes(k) per 16-row tile, rows past `rows` zero.
// avx512TileDot multiplies one tile with nx (1..kMaxTileDotRows) activation
// rows, Q8_0 rows (actRowBytes) biased by avx512BiasActivations, writing
// out[r * outStride + c] for c < cols. Results do not depend on nx.
constexpr int kMaxTileDotRows = 8;
bool avx512TilesSupport(GgmlType type);  // Q4_0, Q5_0, Q8_0
size_t avx512TileBytes(int64_t k);
void avx512PackTiles(GgmlType type, const void* w, size_t rowStride, int64_t rows, int64_t k, int64_t tileBegin,
                     int64_t tileEnd, void* dst);
void avx512TileDot(const uint8_t* tile, const uint8_t* act, size_t actStride, int nx, int64_t k, float* out,
                   size_t outStride, int cols);
// The same on AMX-INT8 tiles (quant_tiles_amx.cpp; only when amxActive()),
// for 2..kMaxTileDotRows activation rows, tiles [tileBegin, tileEnd) of a
// matrix of n rows: y[r * n + c]. The same bits as avx512TileDot.
void amxTileDotRange(const uint8_t* packed, int64_t tileBegin, int64_t tileEnd, int64_t n, const uint8_t* act,
                     size_t actStride, int nx, int64_t k, float* y);

// Tile GEMMs for many activation rows (amx_tiles.h says how), for
// Q4_0/Q5_0/Q8_0 (quant_legacy_amx.cpp) and Q4_K/Q6_K (quant_k_amx.cpp), on
// AMX-INT8 tiles (only call when amxActive()) or AVX-512 VNNI (when
// tileGemmActive()). Per matmul: every activation row converted
// with convertAct into actRowBytes(k) (quantized, biased, unit scales), rows
// padded with zeros to a multiple of 32; the weights packed 16 rows at a
// time into packedTileBytes(k) per tile (packTiles; rows past `rows` are
// zero); then gemmTilePair for two consecutive packed tiles and activation
// rows [mBegin, mEnd) (multiples of 32), writing out[m * outStride + j] for
// m < M and j < cols (at most 32). The integer sums per unit are the VNNI
// kernels'; the float sum over units runs in unit order.
struct TileGemmOps {
    size_t (*packedTileBytes)(int64_t k);
    void (*packTiles)(const void* w, size_t rowStride, int64_t rows, int64_t k, int64_t tileBegin, int64_t tileEnd,
                      void* dst);
    size_t (*actRowBytes)(int64_t k);
    void (*convertAct)(const float* x, void* dst, int64_t k);
    void (*gemmTilePair)(const void* packedPair, const uint8_t* act, size_t actStride, int64_t mBegin, int64_t mEnd,
                         int64_t M, int64_t k, float* out, size_t outStride, int cols);
    // The same with AVX-512 VNNI instead of tiles (only when vnniActive()):
    // the same integer sums, so bit for bit the same results.
    void (*gemmTilePairVnni)(const void* packedPair, const uint8_t* act, size_t actStride, int64_t mBegin, int64_t mEnd,
                             int64_t M, int64_t k, float* out, size_t outStride, int cols);
};
constexpr int kAmxTileRows = 16;
const TileGemmOps* tileGemmLegacyOps(GgmlType type);  // nullptr for other types
const TileGemmOps* tileGemmKOps(GgmlType type);       // nullptr for other types
inline const TileGemmOps* tileGemmOps(GgmlType type) {
    const TileGemmOps* ops = tileGemmLegacyOps(type);
    return ops ? ops : tileGemmKOps(type);
}

// AVX-512 VNNI variants (same results) of the K-quant kernels behind avx2Dot
// and avx2DotKTiled, which return them when vnniActive(); nullptr for types
// without one. (The Q4_K interleaved orders stay AVX2: faster there.)
RowDotFn avx512DotK(GgmlType type);
RowDotFn avx512DotKTiled(GgmlType type);
// How many activation rows the AVX2 kernel for `type` takes per call.
int avx2MaxDotRows(GgmlType type);
// Q4_K with the float order of llama.cpp's interleaved kernels (see
// quant_k_avx2.cpp), which its AVX2 backend uses for Q4_K matrices with a
// multiple of 8 rows: the four-row kernel or the single-row one.
RowDotFn avx2DotQ4_KInterleaved(bool fourRowKernel);
// K-quants with the float order of llama.cpp's tiled kernel, which its AVX2
// backend uses for K-quant matrices it does not repack once a batch has 8+ rows.
RowDotFn avx2DotKTiled(GgmlType type);

// --- per-family entry points (quant_legacy.cpp, quant_k.cpp, row_float.cpp) ---
void dequantizeQ4_0(const void* src, float* dst, int64_t n);
void dequantizeQ4_1(const void* src, float* dst, int64_t n);
void dequantizeQ5_0(const void* src, float* dst, int64_t n);
void dequantizeQ5_1(const void* src, float* dst, int64_t n);
void dequantizeQ8_0(const void* src, float* dst, int64_t n);
void dequantizeQ4_K(const void* src, float* dst, int64_t n);
void dequantizeQ5_K(const void* src, float* dst, int64_t n);
void dequantizeQ6_K(const void* src, float* dst, int64_t n);
void dequantizeF32(const void* src, float* dst, int64_t n);
void dequantizeF16(const void* src, float* dst, int64_t n);
void dequantizeBF16(const void* src, float* dst, int64_t n);

// Two plain Q8_0 rows (dotQ8_0 in quantize.h).
float dotQ8_0RowsScalar(const void* a, const void* b, int64_t n);
float dotQ8_0RowsAvx2(const void* a, const void* b, int64_t n);

void dotScalarQ4_0(const void*, const void*, size_t, int, int64_t, float*, size_t);
void dotScalarQ4_1(const void*, const void*, size_t, int, int64_t, float*, size_t);
void dotScalarQ5_0(const void*, const void*, size_t, int, int64_t, float*, size_t);
void dotScalarQ5_1(const void*, const void*, size_t, int, int64_t, float*, size_t);
void dotScalarQ8_0(const void*, const void*, size_t, int, int64_t, float*, size_t);
void dotScalarQ4_K(const void*, const void*, size_t, int, int64_t, float*, size_t);
void dotScalarQ5_K(const void*, const void*, size_t, int, int64_t, float*, size_t);
void dotScalarQ6_K(const void*, const void*, size_t, int, int64_t, float*, size_t);
void dotScalarF32(const void*, const void*, size_t, int, int64_t, float*, size_t);
void dotScalarF16(const void*, const void*, size_t, int, int64_t, float*, size_t);
void dotScalarBF16(const void*, const void*, size_t, int, int64_t, float*, size_t);

// Activation conversions. The unsuffixed ones pick the active kernel path;
// the *Avx2 ones (quantize_act_avx2.cpp) write the same bytes as the scalar code.
void convertRowF32(const float* x, void* dst, int64_t n);
void convertRowF16(const float* x, void* dst, int64_t n);
void convertRowBF16(const float* x, void* dst, int64_t n);
void convertActQ8_0(const float* x, void* dst, int64_t n);  // blocks + f32 scales
void convertActQ8_1(const float* x, void* dst, int64_t n);
void quantizeQ8_0Avx2(const float* x, void* dst, int64_t n);
void quantizeQ8_1Avx2(const float* x, void* dst, int64_t n);
void quantizeQ8_KAvx2(const float* x, void* dst, int64_t n);
void convertRowF16Avx2(const float* x, void* dst, int64_t n);
void convertRowBF16Avx2(const float* x, void* dst, int64_t n);

} // namespace weir::kernels::detail
