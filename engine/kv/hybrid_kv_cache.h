#pragma once
// The hybrid paged KV cache: a full pool (full-attention layers), a window pool
// (sliding-window layers), the prefix tree that shares full pages across
// sequences and turns, and the K/V storage of every layer. It implements
// KvAccess, so the model reads and writes through the page tables kept here.
//
// Use from one thread (the engine thread). The life of a request as the
// scheduler drives it:
//   planning:  PrefixMatch m = cache.matchPrefix(prompt); // what it would reuse,
//              availablePages(kind) - m.evictableReuseTokens / pageSize  // and what is left
//   admission: int32_t s = cache.openSequence(requestId);
//              cache.attachPrefix(s, prompt);           // shares the cached prefix's pages
//              if (cache.allocate(s, firstChunk) != KvResult::Ok) {
//                  cache.closeSequence(s);              // deferred while others hold pages;
//              }                                        // refused only if it cannot fit alone
//   each step: cache.allocate(s, tokens)               // else preempt the newest request
//              model.forward(batch with seq = s, cache, ...);
//              cache.cachePrefix(s, computedTokens);    // after a prefill completes
//              cache.releaseOutOfWindow(s);             // every E decode steps
//   end:       cache.cachePrefix(s, computedTokens);    // the finished turn, for the next one
//              cache.closeSequence(s);                  // finish, cancel or preempt
//
// Nothing here throws after construction; failures are KvResult values and
// violations are recorded in log() (never silently repaired).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "weir/types/cache_status.h"
#include "weir/types/generate.h"
#include "engine/backend/device_memory.h"
#include "engine/kv/kv_sizing.h"
#include "engine/kv/kv_types.h"
#include "engine/models/kv_access.h"
#include "weir/types/model_config.h"

namespace weir::kv {

struct KvLayerSpec {
    bool sliding = false;   // served by the window pool
    int64_t rowElems = 0;   // n_head_kv * head_dim of this layer
};

struct KvCacheConfig {
    int32_t pageSize = 16;
    int32_t window = 0;                  // W; 0 = no window pool (all layers full)
    int64_t fullTokens = 0;              // capacities, rounded up to whole pages
    int64_t windowTokens = 0;
    int64_t fullFloorTokens = 0;         // resize() never goes below these
    int64_t windowFloorTokens = 0;
    KvDtype dtype = KvDtype::F16;
    std::vector<KvLayerSpec> layers;     // empty: bookkeeping only, no K/V storage (tests)
    // Where the K/V rows live: the model's backend memory (device memory on a
    // GPU); nullptr = process memory. Must outlive the cache.
    DeviceMemory* memory = nullptr;

    // Config for a model with the sizes of a checked plan.
    static KvCacheConfig fromPlan(const PoolPlan& plan, const ModelConfig& model);
};

// Result of looking a prompt up in the prefix tree. Only whole pages match,
// and never the prompt's last token (its logits must be computed).
struct PrefixMatch {
    int64_t cachedTokens = 0;            // longest cached prefix (full pool)
    int64_t reuseTokens = 0;             // usable prefix: the W-1 tokens before it still
                                         // have window KV (== cachedTokens without a window)
    int64_t windowRecomputeTokens = 0;   // cachedTokens - reuseTokens: tombstoned window
                                         // content; the scheduler prefills from reuseTokens
    int64_t evictableReuseTokens = 0;    // of reuseTokens, pages no sequence holds now (they
                                         // count as evictable until attached)
};

struct SequenceInfo {
    uint64_t request = 0;
    int64_t length = 0;                  // positions that have slots in both pools
    int64_t fullTokens = 0;              // tokens' worth of full pages referenced
    int64_t windowTokens = 0;            // tokens' worth of window pages referenced
    int64_t windowStart = 0;             // window pages below this were released (page-aligned)
    int64_t prefixHitTokens = 0;         // reused from the tree at attach
};

struct ResizeResult {
    KvResult result = KvResult::Ok;
    int64_t capacityTokens = 0;          // the pool's capacity afterwards
    int64_t evictedPages = 0;            // cached pages evicted to make room
    std::string message;                 // why it was refused or clamped
};

class PagePool;
class WindowPool;
class RadixTree;
class KvStorage;

class HybridKvCache final : public KvAccess {
public:
    // Throws weir::Error for an unreadable dtype or storage that cannot be
    // allocated.
    explicit HybridKvCache(const KvCacheConfig& config);
    ~HybridKvCache() override;
    HybridKvCache(const HybridKvCache&) = delete;
    HybridKvCache& operator=(const HybridKvCache&) = delete;

    // --- KvAccess (used by Model::forward) ---
    int32_t pageSize() const override;
    KvLayerStorage layer(int32_t layer) const override;
    std::span<const int32_t> pageTable(int32_t layer, int32_t seq) const override;

    bool hasWindow() const;
    int32_t window() const;

    // --- sequences ---
    // A new, empty sequence for `request` (non-zero); returns its id (the
    // `seq` of BatchToken and pageTable), or -1 for request 0.
    int32_t openSequence(uint64_t request);
    // Drops every reference the sequence holds (finish or cancel). Pages also
    // held by the prefix tree stay cached. Unknown ids are ignored.
    void closeSequence(int32_t seq);

    // --- prefix sharing ---
    PrefixMatch matchPrefix(std::span<const int32_t> prompt) const;
    // Matches again and makes an empty sequence reference the usable prefix
    // (its full pages, and window pages of its last window only). The
    // sequence's length becomes reuseTokens.
    PrefixMatch attachPrefix(int32_t seq, std::span<const int32_t> prompt);
    // Offers the complete pages of tokens[0, tokens.size()) (whose KV has been
    // computed) to the tree. Call after a prefill and/or when a request ends.
    // Returns the number of pages newly cached.
    int64_t cachePrefix(int32_t seq, std::span<const int32_t> tokens);

    // --- allocation ---
    StepNeed need(int32_t seq, int64_t newTokens) const;
    StepNeed need(const PrefixMatch& match, int64_t newTokens) const;  // before openSequence
    // Gives positions [length, length + newTokens) slots in both pools,
    // evicting unreferenced cached pages (LRU) when the free lists are short.
    // All or nothing: OutOfFullPages / OutOfWindowPages leave everything held
    // unchanged.
    KvResult allocate(int32_t seq, int64_t newTokens);
    // Releases the sequence's window pages wholly before its window (boundary
    // floor_P(length - W + 1), page-aligned, never moving back). Returns the
    // number of window pages released. `length` counts positions given slots:
    // call it only when the KV of all of them has been written.
    int64_t releaseOutOfWindow(int32_t seq);
    // Shortens the sequence to `length` positions (the rejected tail of a
    // speculative verify step): pages wholly past it go back to both pools,
    // window pages unbound first; a partly kept page keeps its slots (their
    // stale K/V is written over before anything reads it). Refused
    // (BadArgument, nothing changed) for a length past the sequence or below
    // its released window; refused as a Violation (recorded) when a page to
    // drop is cached in the prefix tree: a tail that was never computed
    // must never have been offered to it.
    KvResult truncate(int32_t seq, int64_t length);

    // Pages in each pool: free, evictable (cached, referenced only by the
    // tree) and available = free + evictable (what allocate() can reach).
    int64_t freePages(PoolKind pool) const;
    int64_t evictablePages(PoolKind pool) const;
    int64_t availablePages(PoolKind pool) const;
    int64_t capacityPages(PoolKind pool) const;
    // Evicts up to `pages` unreferenced cached pages (LRU); returns how many.
    int64_t evict(PoolKind pool, int64_t pages);

    // Grows, or shrinks down to what is in use (cached pages evicted first);
    // refuses below the pool's floor. Running sequences are never dropped;
    // their pages may move (call between forward passes only).
    ResizeResult resize(PoolKind pool, int64_t tokens);

    // Full recount of both pools, the tree and every sequence. Returns true
    // when everything is consistent; each violation is recorded in log().
    bool checkIntegrity();
    // Cheap O(1) counter checks (free + owned + cached == capacity, ...).
    bool checkCounters();
    const IntegrityLog& log() const;

    // --- status (engine thread; publish copies to other threads) ---
    // Fills full, window, integrityChecks, violations, violationDetails and
    // prefixHitTokens; the scheduler fills requests and its own counters.
    void fillStatus(CacheStatus& out) const;
    SequenceInfo sequenceInfo(int32_t seq) const;
    uint64_t prefixHitTokens() const;          // total over all attaches

    struct Impl;
private:
    std::unique_ptr<Impl> impl_;
};

} // namespace weir::kv
