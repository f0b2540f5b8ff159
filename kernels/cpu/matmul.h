#pragma once
// The fast path for every weight multiply in a forward pass.
#include <cstdint>
#include <functional>
#include <span>

#include "kernels/cpu/ggml_types.h"
#include "weir/base/weight_view.h"
#include "kernels/cpu/thread_pool.h"

namespace weir::kernels {

// WeightView (weir/base/weight_view.h): a matrix used in place, e.g. straight
// from the GGUF mapping.
using weir::WeightView;

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
// reading every weight row once per 4 activation rows. The kernels are the
// ones cpu_features.h reports active: scalar, AVX2 or AVX-512 VNNI rows, and
// for prompts (32 rows or more) of the tiled types the tile GEMM on AMX or
// VNNI (amx_tiles.h); weights packed at load (weight_tiles.h) take their own
// path.
//
// groups (optional) says how llama.cpp's CPU backend would have batched each
// activation row: its kernel choice, and so the last bits of a result, depend
// on it for K-quant weights on the AVX2 path (Q4_K matrices with a multiple of
// 8 rows: the first n - n % 4 rows of a batch of n go through a four-row
// kernel, the rest one by one; other K-quant matrices: a tiled kernel once
// n >= 8). nullptr: the M rows are one batch. Results never depend on the
// grouping by more than float rounding. On CPUs with AMX (amxActive()), rows
// of batches of 32 or more with Q4_0/Q5_0/Q8_0/Q4_K/Q6_K weights go through AMX tiles,
// which round differently from the kernels smaller batches get.
struct RowGroups {
    const int32_t* size = nullptr;   // per row: rows of its batch (e.g. of its sequence) in this call
    const int32_t* index = nullptr;  // per row: its position among them
};

// before (optional, every multiply below): work that writes activation rows
// [begin, end) of x (e.g. the residual norm that produces them), called for
// disjoint ranges covering every row once, each before its rows are read.
// Where the products run as one pool job of row kernels (decode steps,
// drafts) and the pool has threads to share the rows, it runs inside that
// job with the rows' conversion, a row per claim (rows_first.h); otherwise
// as a job of its own first, in ranges of several rows. It must give the
// same bits however the rows are cut and touch nothing but its rows' data.
using RowPrologue = std::function<void(int64_t begin, int64_t end)>;

void matmul(const WeightView& w, const float* x, int64_t M, float* y, ThreadPool& pool,
            const RowGroups* groups = nullptr, const RowPrologue* before = nullptr);

// One product of matmulMany: y = W x, y laid out as matmul's.
struct MatmulOutput {
    WeightView w;
    float* y = nullptr;
};

// matmul() of each weight with the same M activation rows (q/k/v, gate/up),
// with the results matmul gives each, bit for bit. Where matmul would run a
// pool job per weight (the row kernels: decode steps, drafts) this runs one
// for all of them, and converts the activations once for the weights whose
// kernels take the same conversion (Q4_K and Q6_K both read Q8_K rows).
// Weights may differ in type but not in row length; no y may overlap x.
void matmulMany(std::span<const MatmulOutput> outs, const float* x, int64_t M, ThreadPool& pool,
                const RowGroups* groups = nullptr, const RowPrologue* before = nullptr);

// A gated activation over n values of one row: y = act(gate) * up
// (gegluF16Table, swiglu).
using GluRowFn = void (*)(const float* gate, const float* up, float* y, int64_t n);

// matmulMany of gate and up, then act = glu(gate, up) over each row of
// N = gate.w.rows values, in the same pool job where the row kernels run
// both: each tile of act is computed by the thread that finishes the second
// of its two products' tiles, so a decode step's FFN saves the activation's
// round trip. gate.y, up.y and act get the bits the separate steps give,
// provided glu gives a value the same bits over a span of a row starting at
// a multiple of 16 as over the whole row (gegluF16Table and swiglu do: their
// vector blocks are 8 and 16 values). Throws weir::Error when the weights
// differ in shape.
void matmulGlu(const MatmulOutput& gate, const MatmulOutput& up, GluRowFn glu, float* act, const float* x, int64_t M,
               ThreadPool& pool, const RowGroups* groups = nullptr, const RowPrologue* before = nullptr);

// A step over some of matmulManyThen's values: part `part` of activation
// rows [m0, m1).
using MatmulPartFn = std::function<void(int64_t part, int64_t m0, int64_t m1)>;

// matmulMany, then after(part, m0, m1) for every part of the outputs and
// every tile of activation rows [m0, m1) (the kernels' tiles, covering
// [0, M)). The parts cut a row's values laid end to end (outs[0]'s, then
// outs[1]'s, ...): part p is [partEnds[p - 1], partEnds[p]) (from 0 for p = 0)
// and the last end is the row's total. Where matmulMany runs one job (the
// row kernels: decode steps, drafts) the steps run inside it: a part's on
// the thread that finishes the last tile of its values, so a decode step
// saves the steps' own round trip (q/k/v: a query head's norm and RoPE need
// the whole head; a token's cache store its k and v rows). Otherwise (a
// prompt's tile GEMMs) they run as a job of their own after the products.
// after sees every value of its part in its rows, must touch no other
// part's, and must give the same results however the rows are tiled; the
// y values get matmulMany's bits. Throws weir::Error when partEnds does not
// increase to the total.
void matmulManyThen(std::span<const MatmulOutput> outs, std::span<const int64_t> partEnds, const MatmulPartFn& after,
                    const float* x, int64_t M, ThreadPool& pool, const RowGroups* groups = nullptr,
                    const RowPrologue* before = nullptr);

// Row `r` of w as f32 (embedding lookup).
void getRow(const WeightView& w, int64_t r, float* dst);

} // namespace weir::kernels
