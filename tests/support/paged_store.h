#pragma once
// A paged store of KV rows for the attention kernel tests: `nPos` rows of
// `elems` values of one type, pages handed out in a scrambled order (and more
// pages than needed, filled with a marker byte), seen through PagedRows.
#include <cstdint>
#include <vector>

#include "kernels/cpu/ops.h"
#include "kernels/cpu/ggml_types.h"

namespace weirtest {

struct PagedStore {
    weir::kernels::GgmlType type;
    size_t rowBytes;
    int32_t pageSize;
    std::vector<int32_t> pages;
    std::vector<uint8_t> data;
    PagedStore(weir::kernels::GgmlType t, int64_t elems, int32_t nPos, int32_t ps)
        : type(t), rowBytes(weir::kernels::rowBytes(t, elems)), pageSize(ps) {
        const int32_t nPages = (nPos + ps - 1) / ps;
        for (int32_t i = 0; i < nPages; ++i) pages.push_back((i * 7 + 3) % (nPages + 5));  // distinct, scrambled
        data.assign(size_t(nPages + 5) * size_t(ps) * rowBytes, 0xAB);
    }
    uint8_t* row(int32_t pos) {
        return data.data() + (size_t(pages[size_t(pos / pageSize)]) * size_t(pageSize) + size_t(pos % pageSize)) * rowBytes;
    }
    weir::kernels::PagedRows view(size_t offset) const {
        weir::kernels::PagedRows r;
        r.base = data.data();
        r.rowBytes = rowBytes;
        r.offset = offset;
        r.pages = pages.data();
        r.pageSize = pageSize;
        r.type = type;
        return r;
    }
};

} // namespace weirtest
