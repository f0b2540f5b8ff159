#pragma once
// A pool of fixed-size pages with a state byte, a reference count, an owner and
// a generation per page. The free list is a stack of page ids; the state byte
// makes membership O(1), so a page can never be in it twice: allocate() moves
// Free -> Owned, and a release that would free a page that is already Free is
// refused at the call (a violation naming both holders) before it can reach
// the free list. Counters are updated by every operation, so
//   free + owned + cached == capacity
// holds after each one (checkCounters, O(1)). Used for both the full pool and
// the window pool (see window_pool.h for the window bindings).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/kv/kv_types.h"

namespace weir::kv {

class PagePool {
public:
    // `log` receives violations; it must outlive the pool.
    PagePool(PoolKind kind, int32_t pageSize, int32_t capacityPages, IntegrityLog* log);

    PoolKind kind() const { return kind_; }
    int32_t pageSize() const { return pageSize_; }
    int32_t capacity() const { return int32_t(state_.size()); }
    int32_t freeCount() const { return int32_t(freeList_.size()); }
    int32_t ownedCount() const { return nOwned_; }
    int32_t cachedCount() const { return nCached_; }
    // Cached pages whose only reference is the prefix tree's.
    int32_t evictableCount() const { return nEvictable_; }

    PageState state(int32_t page) const { return PageState(state_[size_t(page)]); }
    int32_t refs(int32_t page) const { return refs_[size_t(page)]; }
    uint32_t generation(int32_t page) const { return gen_[size_t(page)]; }
    Holder owner(int32_t page) const { return owner_[size_t(page)]; }
    Holder lastFreedBy(int32_t page) const { return freedBy_[size_t(page)]; }
    bool contains(int32_t page) const { return page >= 0 && page < capacity(); }
    // True when `ref` names the page's current life (in range, not free, same generation).
    bool live(PageRef ref) const;
    PageRef handle(int32_t page) const { return {page, gen_[size_t(page)]}; }
    // The free list, top (next allocation) last. For inspection and tests.
    std::span<const int32_t> freeList() const { return freeList_; }

    // Takes n pages off the free list for `owner` (Free -> Owned, ref 1, new
    // generation), appending their handles to `out`. All or nothing: fewer
    // than n free pages returns OutOfFullPages/OutOfWindowPages and changes nothing.
    KvResult allocate(Holder owner, int32_t n, std::vector<PageRef>& out);
    // One more reference to a live page (sharing). Stale handles are refused.
    KvResult retain(PageRef ref, Holder by);
    // Drops one reference. The page is freed when the last one goes. Refused
    // (Violation, nothing changed) for: a page that is already free (double
    // free; the message names who freed it and who tries again), a stale
    // generation, an exclusive page released by someone other than its owner,
    // a cached page released by a sequence when only the tree holds it.
    // `freed` (optional) tells whether this call freed the page.
    KvResult release(PageRef ref, Holder by, bool* freed = nullptr);
    // Releases a batch; a page listed twice in one call is caught by a per-call
    // stamp before anything is released (the whole call is refused).
    KvResult releaseMany(std::span<const PageRef> refs, Holder by);

    // The prefix tree takes its own reference: Owned -> Cached, ref + 1.
    KvResult adoptIntoTree(PageRef ref);
    // The tree's reference goes: ref - 1; Cached -> Owned, or -> Free at 0.
    KvResult releaseFromTree(PageRef ref, bool* freed = nullptr);

    // Resizing. grow() appends free pages. shrinkTo() requires every page at
    // or above the new capacity to be free (move them first). movePage()
    // moves a live page's state, references and owner to a free page `to` and
    // frees `from`; returns the new handle (holders must be rewritten by the
    // caller).
    void grow(int32_t newCapacity);
    bool shrinkTo(int32_t newCapacity);
    PageRef movePage(int32_t from, int32_t to);
    // Lowest free page id below `limit`, or -1.
    int32_t lowestFreeBelow(int32_t limit) const;

    // O(1): free + owned + cached == capacity, evictable <= cached.
    bool checkCounters();
    // O(capacity): compares every page with the references the caller
    // counted (`refs[p]`: sequences + tree; `inTree[p]`: the tree holds p),
    // recounts states and the evictable counter, and checks the free list
    // for duplicates and non-free entries. Records each violation.
    bool checkAgainst(std::span<const int32_t> refs, std::span<const uint8_t> inTree);

    std::string describe(int32_t page) const;  // "window page 12 (gen 7, owned, 2 refs, owner request 3)"

private:
    void violation(const std::string& what);
    void setState(int32_t page, PageState s);
    void noteRefChange(int32_t page, int32_t wasEvictable);

    PoolKind kind_;
    int32_t pageSize_;
    IntegrityLog* log_;
    std::vector<uint8_t> state_;
    std::vector<int32_t> refs_;
    std::vector<uint32_t> gen_;
    std::vector<Holder> owner_;     // allocating holder; kShared once a second holder retains
    std::vector<Holder> freedBy_;   // who made the page free last
    std::vector<uint32_t> stamp_;   // per-call duplicate detection in releaseMany
    uint32_t stampNow_ = 0;
    std::vector<int32_t> freeList_; // stack; top = next allocation
    int32_t nOwned_ = 0, nCached_ = 0, nEvictable_ = 0;

public:
    // Owner value of a page that more than one holder has referenced.
    static constexpr Holder kShared = ~uint64_t(0) - 1;
};

} // namespace weir::kv
