#include "engine/kv/page_pool.h"

#include <algorithm>

namespace weir::kv {

PagePool::PagePool(PoolKind kind, int32_t pageSize, int32_t capacityPages, IntegrityLog* log)
    : kind_(kind), pageSize_(pageSize), log_(log) {
    grow(std::max(capacityPages, 0));
}

bool PagePool::live(PageRef ref) const {
    return contains(ref.page) && state(ref.page) != PageState::Free && gen_[size_t(ref.page)] == ref.gen;
}

std::string PagePool::describe(int32_t page) const {
    std::string s = std::string(poolKindName(kind_)) + " page " + std::to_string(page);
    if (!contains(page)) return s + " (out of range, capacity " + std::to_string(capacity()) + ")";
    s += " (gen " + std::to_string(gen_[size_t(page)]) + ", " + pageStateName(state(page)) + ", " +
         std::to_string(refs_[size_t(page)]) + " refs, owner " + holderName(owner_[size_t(page)]) + ")";
    return s;
}

void PagePool::violation(const std::string& what) {
    if (log_) log_->record(what);
}

// Moves the per-state counters along with the state byte.
void PagePool::setState(int32_t page, PageState s) {
    PageState old = state(page);
    if (old == PageState::Owned) --nOwned_;
    if (old == PageState::Cached) --nCached_;
    if (s == PageState::Owned) ++nOwned_;
    if (s == PageState::Cached) ++nCached_;
    state_[size_t(page)] = uint8_t(s);
}

// Keeps nEvictable_ (cached with only the tree's reference) exact: called
// after any change of state or refs with what the page looked like before.
void PagePool::noteRefChange(int32_t page, int32_t oldEvictable) {
    bool now = state(page) == PageState::Cached && refs_[size_t(page)] == 1;
    nEvictable_ += int32_t(now) - oldEvictable;
}

KvResult PagePool::allocate(Holder owner, int32_t n, std::vector<PageRef>& out) {
    if (n < 0 || owner == kNoHolder) return KvResult::BadArgument;
    if (n > freeCount())
        return kind_ == PoolKind::Full ? KvResult::OutOfFullPages : KvResult::OutOfWindowPages;
    const size_t first = out.size();
    for (int32_t i = 0; i < n; ++i) {
        int32_t p = freeList_.back();
        freeList_.pop_back();
        // The state byte is the free list's membership; a list entry that is
        // not free would give one page to two owners: refuse the whole call.
        if (state(p) != PageState::Free) {
            violation("allocate for " + holderName(owner) + ": " + describe(p) +
                      " is on the free list but not free; removed from the list, allocation refused");
            for (size_t j = out.size(); j > first; --j) {
                int32_t q = out[j - 1].page;
                setState(q, PageState::Free);
                refs_[size_t(q)] = 0;
                freeList_.push_back(q);
            }
            out.resize(first);
            return KvResult::Violation;
        }
        setState(p, PageState::Owned);
        refs_[size_t(p)] = 1;
        ++gen_[size_t(p)];
        owner_[size_t(p)] = owner;
        out.push_back({p, gen_[size_t(p)]});
    }
    return KvResult::Ok;
}

KvResult PagePool::retain(PageRef ref, Holder by) {
    if (!contains(ref.page)) {
        violation("retain by " + holderName(by) + ": " + describe(ref.page));
        return KvResult::Violation;
    }
    if (!live(ref)) {
        violation("retain by " + holderName(by) + " of a stale handle (gen " + std::to_string(ref.gen) +
                  "): " + describe(ref.page));
        return KvResult::Violation;
    }
    int32_t before = state(ref.page) == PageState::Cached && refs_[size_t(ref.page)] == 1;
    ++refs_[size_t(ref.page)];
    if (owner_[size_t(ref.page)] != by) owner_[size_t(ref.page)] = kShared;
    noteRefChange(ref.page, before);
    return KvResult::Ok;
}

KvResult PagePool::release(PageRef ref, Holder by, bool* freed) {
    if (freed) *freed = false;
    const int32_t p = ref.page;
    if (!contains(p)) {
        violation("release by " + holderName(by) + ": " + describe(p));
        return KvResult::Violation;
    }
    if (state(p) == PageState::Free) {
        violation("double free of " + std::string(poolKindName(kind_)) + " page " + std::to_string(p) +
                  " (gen " + std::to_string(ref.gen) + "): already freed by " + holderName(freedBy_[size_t(p)]) +
                  ", released again by " + holderName(by) + "; refused, free list unchanged");
        return KvResult::Violation;
    }
    if (gen_[size_t(p)] != ref.gen) {
        violation("stale handle: " + holderName(by) + " released " + std::string(poolKindName(kind_)) + " page " +
                  std::to_string(p) + " of gen " + std::to_string(ref.gen) + ", but it now is " + describe(p) +
                  " (last freed by " + holderName(freedBy_[size_t(p)]) + "); refused");
        return KvResult::Violation;
    }
    const Holder own = owner_[size_t(p)];
    if (state(p) == PageState::Owned && refs_[size_t(p)] == 1 && own != kShared && own != by) {
        violation("release of " + describe(p) + " by " + holderName(by) + ", but " + holderName(own) +
                  " owns it; refused");
        return KvResult::Violation;
    }
    if (state(p) == PageState::Cached && refs_[size_t(p)] == 1) {
        violation("release of " + describe(p) + " by " + holderName(by) +
                  ", but only the prefix cache holds it; refused");
        return KvResult::Violation;
    }
    int32_t before = state(p) == PageState::Cached && refs_[size_t(p)] == 1;
    if (--refs_[size_t(p)] == 0) {
        setState(p, PageState::Free);
        freedBy_[size_t(p)] = by;
        freeList_.push_back(p);
        if (freed) *freed = true;
    }
    noteRefChange(p, before);
    return KvResult::Ok;
}

KvResult PagePool::releaseMany(std::span<const PageRef> refs, Holder by) {
    // The stamp marks every page of this call; a page seen twice is refused
    // before any reference is dropped.
    if (++stampNow_ == 0) {
        std::fill(stamp_.begin(), stamp_.end(), 0u);
        stampNow_ = 1;
    }
    for (const PageRef& r : refs) {
        if (!contains(r.page)) continue;  // release() reports it
        if (stamp_[size_t(r.page)] == stampNow_) {
            violation("release by " + holderName(by) + " lists " + describe(r.page) +
                      " twice in one call; whole call refused");
            return KvResult::Violation;
        }
        stamp_[size_t(r.page)] = stampNow_;
    }
    KvResult result = KvResult::Ok;
    for (const PageRef& r : refs) {
        KvResult one = release(r, by);
        if (one != KvResult::Ok) result = one;
    }
    return result;
}

KvResult PagePool::adoptIntoTree(PageRef ref) {
    if (!live(ref)) {
        violation("prefix cache adopts a stale or free handle (gen " + std::to_string(ref.gen) + "): " +
                  describe(ref.page));
        return KvResult::Violation;
    }
    if (state(ref.page) == PageState::Cached) {
        violation("prefix cache adopts " + describe(ref.page) + " twice");
        return KvResult::Violation;
    }
    int32_t before = 0;
    setState(ref.page, PageState::Cached);
    ++refs_[size_t(ref.page)];
    owner_[size_t(ref.page)] = kShared;
    noteRefChange(ref.page, before);
    return KvResult::Ok;
}

KvResult PagePool::releaseFromTree(PageRef ref, bool* freed) {
    if (freed) *freed = false;
    if (!live(ref) || state(ref.page) != PageState::Cached) {
        violation("prefix cache releases a page it does not hold (gen " + std::to_string(ref.gen) + "): " +
                  describe(ref.page));
        return KvResult::Violation;
    }
    const int32_t p = ref.page;
    int32_t before = refs_[size_t(p)] == 1;
    if (--refs_[size_t(p)] == 0) {
        setState(p, PageState::Free);
        freedBy_[size_t(p)] = kTreeHolder;
        freeList_.push_back(p);
        if (freed) *freed = true;
    } else {
        setState(p, PageState::Owned);
    }
    noteRefChange(p, before);
    return KvResult::Ok;
}

void PagePool::grow(int32_t newCapacity) {
    const int32_t old = capacity();
    if (newCapacity <= old) return;
    state_.resize(size_t(newCapacity), uint8_t(PageState::Free));
    refs_.resize(size_t(newCapacity), 0);
    gen_.resize(size_t(newCapacity), 0);
    owner_.resize(size_t(newCapacity), kNoHolder);
    freedBy_.resize(size_t(newCapacity), kNoHolder);
    stamp_.resize(size_t(newCapacity), 0);
    // Highest ids pushed first, so low ids are handed out first.
    std::vector<int32_t> added;
    for (int32_t p = newCapacity - 1; p >= old; --p) added.push_back(p);
    freeList_.insert(freeList_.begin(), added.begin(), added.end());
}

bool PagePool::shrinkTo(int32_t newCapacity) {
    if (newCapacity < 0 || newCapacity > capacity()) return false;
    for (int32_t p = newCapacity; p < capacity(); ++p)
        if (state(p) != PageState::Free) return false;
    freeList_.erase(std::remove_if(freeList_.begin(), freeList_.end(),
                                   [&](int32_t p) { return p >= newCapacity; }),
                    freeList_.end());
    state_.resize(size_t(newCapacity));
    refs_.resize(size_t(newCapacity));
    gen_.resize(size_t(newCapacity));
    owner_.resize(size_t(newCapacity));
    freedBy_.resize(size_t(newCapacity));
    stamp_.resize(size_t(newCapacity));
    return true;
}

PageRef PagePool::movePage(int32_t from, int32_t to) {
    if (!contains(from) || !contains(to) || state(from) == PageState::Free || state(to) != PageState::Free)
        return {};
    freeList_.erase(std::find(freeList_.begin(), freeList_.end(), to));
    const int32_t fromEvictable = state(from) == PageState::Cached && refs_[size_t(from)] == 1;
    setState(to, state(from));
    refs_[size_t(to)] = refs_[size_t(from)];
    owner_[size_t(to)] = owner_[size_t(from)];
    // A fresh generation for both: handles to either old life are stale now.
    gen_[size_t(to)] = std::max(gen_[size_t(to)], gen_[size_t(from)]) + 1;
    ++gen_[size_t(from)];
    noteRefChange(to, 0);
    setState(from, PageState::Free);
    refs_[size_t(from)] = 0;
    freedBy_[size_t(from)] = kNoHolder;
    freeList_.push_back(from);
    noteRefChange(from, fromEvictable);
    return {to, gen_[size_t(to)]};
}

int32_t PagePool::lowestFreeBelow(int32_t limit) const {
    for (int32_t p = 0; p < std::min(limit, capacity()); ++p)
        if (state(p) == PageState::Free) return p;
    return -1;
}

bool PagePool::checkCounters() {
    const std::string name = poolKindName(kind_);
    bool ok = true;
    if (freeCount() + nOwned_ + nCached_ != capacity()) {
        violation(name + " pool counters: free " + std::to_string(freeCount()) + " + owned " +
                  std::to_string(nOwned_) + " + cached " + std::to_string(nCached_) + " != capacity " +
                  std::to_string(capacity()));
        ok = false;
    }
    if (nEvictable_ < 0 || nEvictable_ > nCached_) {
        violation(name + " pool: evictable " + std::to_string(nEvictable_) + " outside [0, cached " +
                  std::to_string(nCached_) + "]");
        ok = false;
    }
    if (freeCount() > capacity()) {
        violation(name + " pool: available " + std::to_string(freeCount()) + " > capacity");
        ok = false;
    }
    return ok;
}

bool PagePool::checkAgainst(std::span<const int32_t> refs, std::span<const uint8_t> inTree) {
    const std::string name = poolKindName(kind_);
    bool ok = checkCounters();
    int32_t nFree = 0, nOwned = 0, nCached = 0, nEvictable = 0;
    for (int32_t p = 0; p < capacity(); ++p) {
        const PageState s = state(p);
        const int32_t expected = p < int32_t(refs.size()) ? refs[size_t(p)] : 0;
        const bool tree = p < int32_t(inTree.size()) && inTree[size_t(p)];
        nFree += s == PageState::Free;
        nOwned += s == PageState::Owned;
        nCached += s == PageState::Cached;
        nEvictable += s == PageState::Cached && refs_[size_t(p)] == 1;
        if (refs_[size_t(p)] != expected) {
            violation(describe(p) + ": refcount " + std::to_string(refs_[size_t(p)]) + " but " +
                      std::to_string(expected) + " references are held");
            ok = false;
        }
        PageState want = expected == 0 ? PageState::Free : tree ? PageState::Cached : PageState::Owned;
        if (s != want) {
            violation(describe(p) + ": state should be " + pageStateName(want));
            ok = false;
        }
    }
    if (nFree != freeCount() || nOwned != nOwned_ || nCached != nCached_ || nEvictable != nEvictable_) {
        violation(name + " pool recount: free " + std::to_string(nFree) + "/" + std::to_string(freeCount()) +
                  ", owned " + std::to_string(nOwned) + "/" + std::to_string(nOwned_) + ", cached " +
                  std::to_string(nCached) + "/" + std::to_string(nCached_) + ", evictable " +
                  std::to_string(nEvictable) + "/" + std::to_string(nEvictable_) + " (counted/maintained)");
        ok = false;
    }
    std::vector<uint8_t> seen(size_t(capacity()), 0);
    for (int32_t p : freeList_) {
        if (!contains(p)) {
            violation(name + " free list holds out-of-range page " + std::to_string(p));
            ok = false;
            continue;
        }
        if (seen[size_t(p)]++) {
            violation(name + " free list holds page " + std::to_string(p) + " more than once");
            ok = false;
        }
        if (state(p) != PageState::Free) {
            violation(name + " free list holds " + describe(p));
            ok = false;
        }
    }
    return ok;
}

} // namespace weir::kv
