#pragma once
// The fast path for every weight multiply in a forward pass.
#include <cstdint>

#include "kernels/cpu/ggml_types.h"
#include "kernels/cpu/thread_pool.h"

namespace weir::kernels {

// A weight matrix used in place (e.g. straight from the GGUF mapping):
// `rows` rows of `cols` elements of `type`, row r starting at data + r*rowStride.
struct WeightView {
    GgmlType type;
    const void* data;
    int64_t cols;       // K: contiguous length (GGUF ne[0])
    int64_t rows;       // N: output features (GGUF ne[1])
    size_t rowStride;   // bytes between rows
};

// Whether matmul()/getRow() handle weights of this type with rows of `cols`
// elements. Check at load time: matmul() throws weir::Error otherwise.
bool matmulSupports(GgmlType type, int64_t cols);

// y[m][n] = sum_k w[n][k] * x[m][k] for m < M, n < N.
// x is M rows of K f32 (row stride K), y is M rows of N f32 (row stride N);
// y must not overlap x.
// Activations are converted the way llama.cpp's CPU backend does (to Q8_0/Q8_1
// for the 32-element quants, Q8_K for the K-quants, F16/BF16 for those types)
// so results track the reference closely (formulas in quantize.h). Runs on the
// pool's threads, a tile of up to 16 weight rows x 64 activation rows each,
// reading every weight row once per 4 activation rows. The kernel path (scalar
// or AVX2) is the one cpu_features.h reports active.
void matmul(const WeightView& w, const float* x, int64_t M, float* y, ThreadPool& pool);

// Row `r` of w as f32 (embedding lookup).
void getRow(const WeightView& w, int64_t r, float* dst);

} // namespace weir::kernels
