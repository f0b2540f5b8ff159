#pragma once
// Weight matrices repacked once, at load, into the layout of the two-row
// AVX-512 VNNI kernel (kernel_table.h: avx512PackPairs): per 32-element block,
// both rows' weights as biased bytes, then their two scales as f32. The kernel
// then reads a pair's block with one load instead of unpacking two rows and
// converting two f16 scales every time, which is what bounded the output head
// (a 262,144 x 640 Q8_0 matrix, two thirds of a Gemma 3 270M decode step's
// bytes) below the memory bandwidth. Results are bit for bit the unpacked
// kernel's.
//
// Optional (EngineOptions::repackWeights): only types whose packed copy is
// hardly larger are packed (Q8_0: 72 bytes per pair-block instead of 68), so
// a decode step reads about as many bytes as before, and the original pages
// of a memory-mapped file are released as they are packed
// (releaseMappedRange), so memory stays about the model's size.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/cpu/matmul.h"

namespace weir::kernels {

// Bytes of w's packed copy, or 0 when the kernels of this CPU would not use
// one for w (no AVX-512 VNNI, a type not worth packing, fewer than 2 rows).
size_t weightPairsBytes(const WeightView& w);

// Writes pairs [pairBegin, pairEnd) (rows 2p and 2p + 1) of w to dst, laid
// out as the whole packed copy (dst points at its start).
void packWeightPairs(const WeightView& w, int64_t pairBegin, int64_t pairEnd, uint8_t* dst);

// Memory for packed copies: anonymous pages asking for transparent huge pages
// (a 189 MB head streamed every token touches 46,000 small pages otherwise).
struct PackedBuffer {
    uint8_t* data = nullptr;
    size_t bytes = 0;
    PackedBuffer() = default;
    explicit PackedBuffer(size_t n);  // throws std::bad_alloc
    ~PackedBuffer();
    PackedBuffer(const PackedBuffer&) = delete;
    PackedBuffer& operator=(const PackedBuffer&) = delete;
};

// Gives back the pages wholly inside [p, p + n) of a read-only file mapping:
// they are reread from the file if touched again. Only for memory mapped
// from a file (never heap memory: its contents would be lost).
void releaseMappedRange(const void* p, size_t n);

} // namespace weir::kernels
