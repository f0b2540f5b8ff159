#pragma once
// Element-wise and per-row operations of a transformer forward pass: norms,
// rotary embeddings, activations, softmax, and attention of one query head
// over keys/values stored in a paged cache. The arithmetic follows what
// llama.cpp's CPU backend does (order of scaling, f16 rounding where it rounds)
// so greedy outputs track the reference; each function says where it rounds.
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/ggml_types.h"

namespace weir::kernels {

// y = x / sqrt(mean(x²) + eps), then y *= w when w is not null. The sum of
// squares is accumulated in double. x and y may alias.
void rmsNorm(const float* x, const float* w, float* y, int64_t n, float eps);
// rmsNorm of `rows` consecutive rows of n values (x and y at stride n; y may
// be x): each row gets rmsNorm's bits. Its sum of squares is one sequential
// chain of double additions (llama.cpp's order), which is slow alone; here
// several rows' chains run side by side in vector lanes.
void rmsNormRows(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps);
// The same over rows `stride` floats apart (x and y alike): one head of
// consecutive tokens, whose rows are a token's width apart.
void rmsNormRowsStrided(const float* x, const float* w, float* y, int64_t rows, int64_t n, int64_t stride, float eps);

// Rotary position embedding.
struct RopeParams {
    bool neox = true;        // true: pairs (i, i + nRot/2); false: adjacent pairs (2i, 2i+1)
    int32_t nRot = 0;        // rotated dimensions per head (even; the rest pass through)
    float base = 10000.0f;   // theta_i = pos * freqScale * base^(-2i/nRot)
    float freqScale = 1.0f;  // 1 / linear scaling factor
    const float* freqFactors = nullptr;  // optional nRot/2 divisors of theta (Llama 3.1 rope_freqs)
};
// cos/sin of every rotated pair at `pos`: cs[2i] = cos theta_i, cs[2i+1] = sin theta_i (nRot floats).
void ropeAngles(const RopeParams& p, int32_t pos, float* cs);
// Rotates nHeads heads of headDim floats (contiguous) in place with angles from ropeAngles.
void ropeApply(float* x, int64_t nHeads, int64_t headDim, int32_t nRot, bool neox, const float* cs);

// GELU, tanh approximation, evaluated exactly in f32.
float geluTanh(float x);
// y = gelu(gate) * up with llama.cpp's table: gelu is looked up at the f16
// rounding of gate and rounded to f16 (|gate| >= 10 handled exactly).
void gegluF16Table(const float* gate, const float* up, float* y, int64_t n);
// That table: f16 gelu of every f16 bit pattern (65536 entries).
const uint16_t* geluF16Table();
// y = silu(gate) * up, silu(x) = x / (1 + e^-x), with e^x from expApprox
// for whole groups of 8 and libm for a tail, as llama.cpp's AVX2 build does.
void swiglu(const float* gate, const float* up, float* y, int64_t n);
// e^x to about 1 ulp, bit-identical to llama.cpp's vectorised expf.
float expApprox(float x);
// The same e^x as llama.cpp's AVX-512 build computes it (the polynomial's
// 1 added before scaling by 2^n; saturating beyond |n| > 192).
float expApprox512(float x);
// In-place softmax of n values (max subtracted first). Returns nothing; sum
// accumulated in double.
void softmax(float* x, int64_t n);
// Index of the largest of n values, the lowest index among equals, NaN
// skipped; 0 when all are NaN or n <= 0. Greedy sampling runs it over a whole
// vocabulary (262,144 logits for Gemma 3) every decoded token.
int64_t argmaxF32(const float* x, int64_t n);
// y[i] += x[i]
void addInPlace(float* y, const float* x, int64_t n);
// y[i] *= s
void scaleInPlace(float* y, float s, int64_t n);

// Rows of f32 values converted to a KV cache row type (F16, Q8_0 or F32).
// Q8_0 (per block of 32: d = amax/127 as f16, q = round-half-even(x*127/amax))
// needs n to be a multiple of 32. Returns false for other types.
bool storeKvRow(GgmlType type, const float* x, void* dst, int64_t n);

// Rows of a paged store: position p lives in row pages[p / pageSize] * pageSize
// + p % pageSize, at base + row * rowBytes; `offset` bytes into the row.
struct PagedRows {
    const uint8_t* base = nullptr;
    size_t rowBytes = 0;
    size_t offset = 0;
    const int32_t* pages = nullptr;
    int32_t pageSize = 0;
    GgmlType type = GgmlType::F16;  // F16, Q8_0, F32 or E4M3_KV
    const uint8_t* row(int32_t pos) const {
        const int64_t r = int64_t(pages[pos / pageSize]) * pageSize + pos % pageSize;
        return base + r * int64_t(rowBytes) + offset;
    }
};

// Floats of scratch attendHead needs for head sizes dk, dv.
size_t attendScratchFloats(int64_t dk, int64_t dv);

// out = softmax(scale * q·k_p for p in [first, last]) · v_p for one query head
// (dk values) against one KV head (dk keys, dv values). Online softmax in
// position order, as llama.cpp's CPU flash attention: for F16 K the query is
// rounded to f16 and for Q8_0 K quantized to Q8_0; with F16 V the weighted sum
// is accumulated in f16. `scratch` holds attendScratchFloats(dk, dv) floats.
void attendHead(const float* q, int64_t dk, int64_t dv, const PagedRows& k, const PagedRows& v,
                int32_t first, int32_t last, float scale, float* out, float* scratch);

// attendHead over a part of a query's positions, before the division by the
// sum: the largest score, the sum of exp(score - max), and in `acc` (dv
// floats) the values weighted by exp(score - max). attendHead is this over
// all of them, then acc / sum. Parts of one query's range, each on its own
// thread, make one result through mergeAttendParts (flash decoding): within
// float rounding of attendHead, not bit for bit.
struct AttendPart {
    float max = 0.0f;
    float sum = 0.0f;
};
AttendPart attendHeadPart(const float* q, int64_t dk, int64_t dv, const PagedRows& k, const PagedRows& v,
                          int32_t first, int32_t last, float scale, float* acc, float* scratch);
// out (dv floats) = the attention over the union of n parts' positions; part
// i's values at accs + i * dv.
void mergeAttendParts(const AttendPart* parts, const float* accs, int n, int64_t dv, float* out);

} // namespace weir::kernels
