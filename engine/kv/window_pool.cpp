#include "engine/kv/window_pool.h"

#include <algorithm>

namespace weir::kv {

WindowPool::WindowPool(int32_t pageSize, int32_t capacityPages, int32_t fullCapacityPages, IntegrityLog* log)
    : pages_(PoolKind::Window, pageSize, capacityPages, log), log_(log),
      fullOf_(size_t(std::max(capacityPages, 0)), -1), windowOf_(size_t(std::max(fullCapacityPages, 0)), -1) {}

KvResult WindowPool::bind(PageRef window, int32_t fullPage) {
    if (!pages_.live(window)) {
        log_->record("bind: window handle is stale or free: " + pages_.describe(window.page));
        return KvResult::Violation;
    }
    if (fullPage < 0 || fullPage >= int32_t(windowOf_.size())) {
        log_->record("bind: full page " + std::to_string(fullPage) + " out of range");
        return KvResult::Violation;
    }
    if (fullOf_[size_t(window.page)] != -1) {
        log_->record("bind: window page " + std::to_string(window.page) + " is already bound to full page " +
                     std::to_string(fullOf_[size_t(window.page)]) + " (asked for " + std::to_string(fullPage) + ")");
        return KvResult::Violation;
    }
    if (windowOf_[size_t(fullPage)] != -1) {
        // The FreeToken failure: a second owner overwriting a live mapping.
        log_->record("bind: full page " + std::to_string(fullPage) + " is already bound to window page " +
                     std::to_string(windowOf_[size_t(fullPage)]) + "; refused to overwrite it with window page " +
                     std::to_string(window.page));
        return KvResult::Violation;
    }
    fullOf_[size_t(window.page)] = fullPage;
    windowOf_[size_t(fullPage)] = window.page;
    ++nBound_;
    return KvResult::Ok;
}

KvResult WindowPool::checkBinding(PageRef window, int32_t fullPage, Holder by) {
    if (!pages_.contains(window.page)) {
        log_->record("window release by " + holderName(by) + ": page " + std::to_string(window.page) + " out of range");
        return KvResult::Violation;
    }
    const int32_t bound = fullOf_[size_t(window.page)];
    const bool back = fullPage >= 0 && fullPage < int32_t(windowOf_.size()) &&
                      windowOf_[size_t(fullPage)] == window.page;
    // A free page has no binding: let the pool report the double free itself.
    if (pages_.state(window.page) == PageState::Free) return KvResult::Ok;
    if (bound != fullPage || !back) {
        log_->record("window release by " + holderName(by) + ": " + pages_.describe(window.page) +
                     " is bound to full page " + std::to_string(bound) + ", the holder expected full page " +
                     std::to_string(fullPage) + " (reverse map " +
                     (fullPage >= 0 && fullPage < int32_t(windowOf_.size())
                          ? std::to_string(windowOf_[size_t(fullPage)]) : std::string("n/a")) +
                     "); refused");
        return KvResult::Violation;
    }
    return KvResult::Ok;
}

void WindowPool::unbind(int32_t windowPage) {
    const int32_t f = fullOf_[size_t(windowPage)];
    if (f < 0) return;
    fullOf_[size_t(windowPage)] = -1;
    if (f < int32_t(windowOf_.size()) && windowOf_[size_t(f)] == windowPage) windowOf_[size_t(f)] = -1;
    --nBound_;
}

KvResult WindowPool::release(PageRef window, Holder by, int32_t fullPage, bool* freed) {
    bool f = false;
    if (freed) *freed = false;
    if (KvResult r = checkBinding(window, fullPage, by); r != KvResult::Ok) return r;
    KvResult r = pages_.release(window, by, &f);
    if (r == KvResult::Ok && f) unbind(window.page);
    if (freed) *freed = f;
    return r;
}

KvResult WindowPool::releaseFromTree(PageRef window, int32_t fullPage, bool* freed) {
    bool f = false;
    if (freed) *freed = false;
    if (KvResult r = checkBinding(window, fullPage, kTreeHolder); r != KvResult::Ok) return r;
    KvResult r = pages_.releaseFromTree(window, &f);
    if (r == KvResult::Ok && f) unbind(window.page);
    if (freed) *freed = f;
    return r;
}

void WindowPool::setFullCapacity(int32_t fullCapacityPages) {
    windowOf_.resize(size_t(fullCapacityPages), -1);
}

bool WindowPool::shrinkTo(int32_t newCapacity) {
    if (!pages_.shrinkTo(newCapacity)) return false;
    fullOf_.resize(size_t(newCapacity));
    return true;
}

PageRef WindowPool::moveWindowPage(int32_t from, int32_t to) {
    PageRef moved = pages_.movePage(from, to);
    if (!moved.valid()) return moved;
    const int32_t f = fullOf_[size_t(from)];
    fullOf_[size_t(from)] = -1;
    fullOf_[size_t(to)] = f;
    if (f >= 0) windowOf_[size_t(f)] = to;
    return moved;
}

void WindowPool::moveFullPage(int32_t from, int32_t to) {
    const int32_t w = windowOf_[size_t(from)];
    windowOf_[size_t(from)] = -1;
    windowOf_[size_t(to)] = w;
    if (w >= 0) fullOf_[size_t(w)] = to;
}

bool WindowPool::checkBindings(const PagePool& fullPool) {
    bool ok = true;
    int32_t bound = 0;
    for (int32_t w = 0; w < pages_.capacity(); ++w) {
        const int32_t f = fullOf_[size_t(w)];
        const bool isFree = pages_.state(w) == PageState::Free;
        if (f < 0) {
            if (!isFree) {
                log_->record("binding: live " + pages_.describe(w) + " is bound to no full page");
                ok = false;
            }
            continue;
        }
        ++bound;
        if (isFree) {
            log_->record("binding: free window page " + std::to_string(w) + " is still bound to full page " +
                         std::to_string(f));
            ok = false;
        }
        if (f >= int32_t(windowOf_.size()) || windowOf_[size_t(f)] != w) {
            log_->record("binding: window page " + std::to_string(w) + " -> full page " + std::to_string(f) +
                         " but the reverse map does not point back");
            ok = false;
        } else if (!fullPool.contains(f) || fullPool.state(f) == PageState::Free) {
            log_->record("binding: window page " + std::to_string(w) + " is bound to full page " +
                         std::to_string(f) + ", which is free");
            ok = false;
        }
    }
    for (int32_t f = 0; f < int32_t(windowOf_.size()); ++f) {
        const int32_t w = windowOf_[size_t(f)];
        if (w >= 0 && (w >= pages_.capacity() || fullOf_[size_t(w)] != f)) {
            log_->record("binding: full page " + std::to_string(f) + " -> window page " + std::to_string(w) +
                         " but the window side does not point back");
            ok = false;
        }
    }
    if (bound != nBound_) {
        log_->record("binding count " + std::to_string(nBound_) + " but " + std::to_string(bound) + " bound");
        ok = false;
    }
    return ok;
}

} // namespace weir::kv
