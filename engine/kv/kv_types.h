#pragma once
// Small value types shared by the KV pools, the prefix tree and the cache
// that ties them together. Nothing here allocates or throws.
#include <cstdint>
#include <deque>
#include <string>

#include "weir/types/cache_status.h"

namespace weir::kv {

// Which pool a page lives in (the public weir::PoolKind): full-attention
// layers use Full, sliding-window layers use Window.
using weir::PoolKind;

// One byte per page. Allocation moves Free -> Owned, the prefix tree adopting
// a page moves Owned -> Cached, the last reference going away moves either to
// Free. Any other transition is a violation caught at the call.
enum class PageState : uint8_t { Free = 0, Owned = 1, Cached = 2 };
const char* pageStateName(PageState s);

// Who holds a reference: a request id (never 0), or the prefix tree.
using Holder = uint64_t;
constexpr Holder kNoHolder = 0;
constexpr Holder kTreeHolder = ~uint64_t(0);
std::string holderName(Holder h);  // "request 17", "prefix cache", "nobody"

// A handle to a page: the id plus the generation it had when the handle was
// made. Every allocation bumps the generation, so a handle kept after the page
// was freed (and perhaps handed to someone else) is recognised as stale.
struct PageRef {
    int32_t page = -1;
    uint32_t gen = 0;
    bool valid() const { return page >= 0; }
    friend bool operator==(const PageRef&, const PageRef&) = default;
};

// Outcome of an operation on the pools. Hot paths return these, never throw.
enum class KvResult : uint8_t {
    Ok = 0,
    OutOfFullPages,     // not enough free + evictable pages in the full pool
    OutOfWindowPages,   // same for the window pool
    Violation,          // an invariant would break (double free, stale handle,
                        // bad binding): refused, recorded in the IntegrityLog
    BadArgument,        // unknown sequence, negative count, below a floor, ...
};
const char* kvResultName(KvResult r);

// Where violations go. They are counted and described, never repaired.
struct IntegrityLog {
    uint64_t checks = 0;       // full recounts run (checkIntegrity)
    uint64_t violations = 0;   // every violation ever recorded
    std::deque<std::string> details;  // most recent first, at most kMaxDetails
    static constexpr size_t kMaxDetails = 32;
    void record(std::string what) {
        ++violations;
        details.push_front(std::move(what));
        if (details.size() > kMaxDetails) details.pop_back();
    }
};

} // namespace weir::kv
