#include "kernels/cpu/weight_tiles.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/kernel_table.h"

namespace weir::kernels {

size_t weightTilesBytes(const WeightView& w) {
    // Q8_0 only: for the 4- and 5-bit types the bytes would double or triple
    // what a decode step reads.
    if (w.type != GgmlType::Q8_0 || w.rows < 1 || !matmulSupports(w.type, w.cols)) return 0;
    if (activeKernelPath() != KernelPath::Avx2 || !vnniActive()) return 0;
    return size_t((w.rows + kWeightTileRows - 1) / kWeightTileRows) * detail::avx512TileBytes(w.cols);
}

void packWeightTiles(const WeightView& w, int64_t tileBegin, int64_t tileEnd, uint8_t* dst) {
    detail::avx512PackTiles(w.type, w.data, w.rowStride, w.rows, w.cols, tileBegin, tileEnd, dst);
}

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
}

PackedBuffer::PackedBuffer(size_t n) {
    bytes = (n + kHugePage - 1) / kHugePage * kHugePage;
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: small pages work too
#endif
    data = static_cast<uint8_t*>(p);
}

PackedBuffer::~PackedBuffer() {
    if (data) ::munmap(data, bytes);
}

void releaseMappedRange(const void* p, size_t n) {
    const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
    const uintptr_t begin = (uintptr_t(p) + page - 1) / page * page, end = (uintptr_t(p) + n) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

} // namespace weir::kernels
