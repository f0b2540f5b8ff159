#pragma once
// Weight matrices repacked once, at load, for the AVX-512 VNNI tile kernel
// (kernel_table.h: avx512TileDot, quant_tiles_avx512.cpp): 16 rows at a
// time, each 32-element block as AMX's B tile of signed bytes plus the rows'
// sums and f16 scales. The kernel reads a tile's block with eight loads and
// needs one multiply-add per block and activation row for all 16 rows, where
// unpacking rows needs one per row: that is what kept the output head (a
// 262,144 x 640 Q8_0 matrix, two thirds of a Gemma 3 270M decode step's
// bytes) below the memory bandwidth, and made it compute-bound once a step
// carries several sequences. Its results differ from the unpacked kernels'
// in rounding only (block sums added in block order, not in 8 lanes), and
// never depend on how many rows a call multiplies.
//
// Optional (EngineOptions::repackWeights): only types whose packed copy is
// hardly larger are packed (Q8_0: 576 bytes per 16-row block instead of
// 544), so a decode step reads about as many bytes as before, and the
// original pages of a memory-mapped file are released as they are packed
// (releaseMappedRange), so memory stays about the model's size.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/cpu/matmul.h"

namespace weir::kernels {

// Rows per tile of a packed copy.
constexpr int64_t kWeightTileRows = 16;

// Bytes of w's packed copy, or 0 when the kernels of this CPU would not use
// one for w (no AVX-512 VNNI, a type not worth packing).
size_t weightTilesBytes(const WeightView& w);

// Writes tiles [tileBegin, tileEnd) (rows 16t .. 16t + 15; rows past the
// matrix are zero) of w to dst, laid out as the whole packed copy (dst
// points at its start).
void packWeightTiles(const WeightView& w, int64_t tileBegin, int64_t tileEnd, uint8_t* dst);

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
