#pragma once
// The window pool: pages for the sliding-window layers, each bound to exactly
// one full-pool page (the full page that holds the same positions of the same
// sequence). The binding has a reverse map in both directions:
//   fullOf(w) == f  <=>  windowOf(f) == w
// bind() refuses a full page or a window page that is already bound, and the
// release that frees a window page checks that the reverse map still points
// back before unbinding. A full page must not be freed while bound; the
// cache checks windowOf(f) == -1 before freeing f.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/kv/page_pool.h"

namespace weir::kv {

class WindowPool {
public:
    WindowPool(int32_t pageSize, int32_t capacityPages, int32_t fullCapacityPages, IntegrityLog* log);

    PagePool& pages() { return pages_; }
    const PagePool& pages() const { return pages_; }

    int32_t fullOf(int32_t windowPage) const { return fullOf_[size_t(windowPage)]; }
    int32_t windowOf(int32_t fullPage) const { return windowOf_[size_t(fullPage)]; }
    int32_t boundCount() const { return nBound_; }

    // Binds a live window page to a full page; both must be unbound.
    KvResult bind(PageRef window, int32_t fullPage);
    // Drops one reference to `window`, which must be bound to `fullPage`
    // (checked first: a mismatch is a violation and nothing changes). When
    // the page is freed its binding is removed.
    KvResult release(PageRef window, Holder by, int32_t fullPage, bool* freed = nullptr);
    KvResult releaseFromTree(PageRef window, int32_t fullPage, bool* freed = nullptr);

    // Resizing: the full side follows the full pool's capacity; moves keep
    // bindings.
    void setFullCapacity(int32_t fullCapacityPages);
    void grow(int32_t newCapacity) { pages_.grow(newCapacity); fullOf_.resize(size_t(newCapacity), -1); }
    bool shrinkTo(int32_t newCapacity);
    PageRef moveWindowPage(int32_t from, int32_t to);     // binding follows the page
    void moveFullPage(int32_t from, int32_t to);           // binding follows the full page

    // O(capacity): fullOf and windowOf are inverse, only live window pages
    // are bound, bound count matches. Records each violation.
    bool checkBindings(const PagePool& fullPool);

private:
    KvResult checkBinding(PageRef window, int32_t fullPage, Holder by);
    void unbind(int32_t windowPage);

    PagePool pages_;
    IntegrityLog* log_;
    std::vector<int32_t> fullOf_;    // per window page: bound full page or -1
    std::vector<int32_t> windowOf_;  // per full page: bound window page or -1
    int32_t nBound_ = 0;
};

} // namespace weir::kv
