#include "engine/kv/hybrid_kv_cache.h"

#include <algorithm>
#include <limits>

#include "engine/kv/kv_storage.h"
#include "engine/kv/page_pool.h"
#include "engine/kv/radix_tree.h"
#include "engine/kv/window_pool.h"
#include "weir/base/error.h"

namespace weir::kv {

KvCacheConfig KvCacheConfig::fromPlan(const PoolPlan& plan, const ModelConfig& model) {
    KvCacheConfig c;
    c.pageSize = plan.pageSize;
    c.window = plan.window;
    c.fullTokens = plan.fullTokens;
    c.windowTokens = plan.windowTokens;
    c.fullFloorTokens = plan.fullFloor;
    c.windowFloorTokens = plan.windowFloor.tokens;
    c.dtype = plan.dtype;
    for (int32_t l = 0; l < model.nLayer; ++l) {
        KvLayerSpec s;
        s.sliding = plan.window > 0 && l < int32_t(model.layerSlides.size()) && model.layerSlides[size_t(l)];
        s.rowElems = model.kvRowElems();
        c.layers.push_back(s);
    }
    return c;
}

namespace {

// One sequence's view of the pools: a page table per pool. Entry i covers
// positions [i*P, (i+1)*P); window entries below windowStart are -1.
struct Seq {
    bool open = false;
    uint64_t request = 0;
    int64_t length = 0;
    std::vector<int32_t> fullTable, windowTable;
    std::vector<uint32_t> fullGen, windowGen;
    int64_t windowStart = 0;
    int64_t prefixHit = 0;
    int32_t treeNode = RadixTree::kRoot;  // deepest node locked by this sequence
};

int32_t pagesOrThrow(int64_t tokens, int32_t pageSize, const char* what) {
    if (tokens < 0) throw Error(std::string(what) + " must not be negative");
    const int64_t pages = pagesFor(tokens, pageSize);
    if (pages > std::numeric_limits<int32_t>::max() / 2) throw Error(std::string(what) + " is too large");
    return int32_t(pages);
}

} // namespace

struct HybridKvCache::Impl {
    KvCacheConfig cfg;
    int32_t P;
    IntegrityLog log;
    PagePool full;
    std::unique_ptr<WindowPool> window;
    std::unique_ptr<RadixTree> tree;
    std::unique_ptr<KvStorage> fullStore, windowStore;
    std::vector<uint8_t> layerSlides;
    std::vector<Seq> seqs;
    std::vector<int32_t> freeSeqIds;
    uint64_t prefixHitTotal = 0;

    explicit Impl(const KvCacheConfig& c)
        : cfg(c), P(c.pageSize),
          full(PoolKind::Full, c.pageSize, pagesOrThrow(c.fullTokens, std::max(c.pageSize, 1), "full pool size"),
               &log) {
        if (c.pageSize <= 0) throw Error("--page-size must be at least 1 (got " + std::to_string(c.pageSize) + ")");
        if (!attentionReadsKvDtype(c.dtype))
            throw Error(std::string("--kv-cache-dtype ") + kvDtypeName(c.dtype) +
                        ": the attention kernels cannot read this KV storage type; use --kv-cache-dtype f16, q8_0, fp8_e4m3 or f32");
        if (c.window < 0) throw Error("sliding window must not be negative");
        if (c.window > 0) {
            const int32_t wp = pagesOrThrow(c.windowTokens, P, "window pool size");
            if (wp == 0) throw Error("the model has sliding-window layers but the window pool has no capacity");
            window = std::make_unique<WindowPool>(P, wp, full.capacity(), &log);
        }
        tree = std::make_unique<RadixTree>(P, c.window, full, window.get(), &log);
        std::vector<KvStorage::LayerSpec> fullLayers, windowLayers;
        for (int32_t l = 0; l < int32_t(c.layers.size()); ++l) {
            const bool slides = c.layers[size_t(l)].sliding && window;
            layerSlides.push_back(slides);
            (slides ? windowLayers : fullLayers).push_back({l, c.layers[size_t(l)].rowElems});
        }
        DeviceMemory& memory = c.memory ? *c.memory : hostMemory();
        fullStore = std::make_unique<KvStorage>(c.dtype, P, full.capacity(), fullLayers, memory);
        windowStore = std::make_unique<KvStorage>(c.dtype, P, window ? window->pages().capacity() : 0, windowLayers, memory);
    }

    Seq* seq(int32_t id) {
        return id >= 0 && id < int32_t(seqs.size()) && seqs[size_t(id)].open ? &seqs[size_t(id)] : nullptr;
    }
    const Seq* seq(int32_t id) const {
        return id >= 0 && id < int32_t(seqs.size()) && seqs[size_t(id)].open ? &seqs[size_t(id)] : nullptr;
    }
    PagePool* poolOf(PoolKind k) { return k == PoolKind::Full ? &full : window ? &window->pages() : nullptr; }
    const PagePool* poolOf(PoolKind k) const {
        return k == PoolKind::Full ? &full : window ? &window->pages() : nullptr;
    }

    int32_t open(uint64_t request) {
        if (request == kNoHolder || request >= PagePool::kShared) return -1;
        int32_t id;
        if (!freeSeqIds.empty()) {
            id = freeSeqIds.back();
            freeSeqIds.pop_back();
        } else {
            id = int32_t(seqs.size());
            seqs.emplace_back();
        }
        seqs[size_t(id)] = Seq{};
        seqs[size_t(id)].open = true;
        seqs[size_t(id)].request = request;
        return id;
    }

    void releaseWindowEntry(Seq& s, size_t i) {
        if (i >= s.windowTable.size() || s.windowTable[i] < 0) return;
        window->release({s.windowTable[i], s.windowGen[i]}, s.request, s.fullTable[i]);
        s.windowTable[i] = -1;
    }

    void releaseFullEntry(Seq& s, size_t i) {
        const int32_t f = s.fullTable[i];
        // A full page must not be freed while a window page is bound to it.
        if (window && full.contains(f) && full.state(f) == PageState::Owned && full.refs(f) == 1 &&
            window->windowOf(f) >= 0) {
            log.record("request " + std::to_string(s.request) + " would free full page " + std::to_string(f) +
                       " while window page " + std::to_string(window->windowOf(f)) +
                       " is still bound to it; refused (page leaked, not reused)");
            return;
        }
        full.release({f, s.fullGen[i]}, s.request);
    }

    void close(int32_t id) {
        Seq* s = seq(id);
        if (!s) return;
        // Window pages first: their bindings must go before the full pages.
        for (size_t i = 0; i < s->windowTable.size(); ++i) releaseWindowEntry(*s, i);
        for (size_t i = s->fullTable.size(); i-- > 0;) releaseFullEntry(*s, i);
        if (s->treeNode != RadixTree::kRoot) tree->unlockPath(s->treeNode);
        *s = Seq{};
        freeSeqIds.push_back(id);
    }

    int64_t evictableFull() const { return tree->evictableFullCount(); }
    int64_t evictableWindow() const { return window ? window->pages().evictableCount() : 0; }

    // Makes sure the free lists hold nf / nw pages, evicting LRU cached pages;
    // checks both pools before evicting anything.
    KvResult makeRoom(int64_t nf, int64_t nw) {
        if (full.freeCount() + evictableFull() < nf) return KvResult::OutOfFullPages;
        if (nw > 0 && (!window || window->pages().freeCount() + evictableWindow() < nw))
            return KvResult::OutOfWindowPages;
        if (full.freeCount() < nf) tree->evictFull(nf - full.freeCount());
        if (nw > 0 && window->pages().freeCount() < nw) tree->evictWindow(nw - window->pages().freeCount());
        if (full.freeCount() < nf) return KvResult::OutOfFullPages;
        if (nw > 0 && window->pages().freeCount() < nw) return KvResult::OutOfWindowPages;
        return KvResult::Ok;
    }

    // Appends n new pages to the sequence's tables (window pages bound to the
    // new full pages). All or nothing.
    KvResult appendPages(Seq& s, int64_t n) {
        if (n <= 0) return KvResult::Ok;
        const int64_t nw = window ? n : 0;
        if (KvResult r = makeRoom(n, nw); r != KvResult::Ok) return r;
        std::vector<PageRef> f, w;
        if (KvResult r = full.allocate(s.request, int32_t(n), f); r != KvResult::Ok) return r;
        if (nw > 0) {
            if (KvResult r = window->pages().allocate(s.request, int32_t(nw), w); r != KvResult::Ok) {
                full.releaseMany(f, s.request);
                return r;
            }
            for (int64_t i = 0; i < n; ++i) {
                if (window->bind(w[size_t(i)], f[size_t(i)].page) != KvResult::Ok) {
                    // Unwind: bound ones through the checked path, the rest directly.
                    for (int64_t j = 0; j < n; ++j) {
                        if (j < i) window->release(w[size_t(j)], s.request, f[size_t(j)].page);
                        else window->pages().release(w[size_t(j)], s.request);
                    }
                    full.releaseMany(f, s.request);
                    return KvResult::Violation;
                }
            }
        }
        for (int64_t i = 0; i < n; ++i) {
            s.fullTable.push_back(f[size_t(i)].page);
            s.fullGen.push_back(f[size_t(i)].gen);
            if (window) {
                s.windowTable.push_back(w[size_t(i)].page);
                s.windowGen.push_back(w[size_t(i)].gen);
            }
        }
        return KvResult::Ok;
    }

    // Entry i of the sequence switches from its own pages to the tree node's
    // (same tokens, same KV): its own copies are released (and freed), the
    // tree's retained. The window page is taken
    // only while the sequence still holds one at i (inside its window).
    void useTreePages(Seq& s, size_t i, int32_t node) {
        const bool keepWindow = window && s.windowTable[i] >= 0;
        releaseWindowEntry(s, i);  // unbinds before the full page can be freed
        releaseFullEntry(s, i);
        const PageRef f = tree->fullPage(node);
        full.retain(f, s.request);
        s.fullTable[i] = f.page;
        s.fullGen[i] = f.gen;
        if (keepWindow) {
            const PageRef w = tree->windowPage(node);
            window->pages().retain(w, s.request);
            s.windowTable[i] = w.page;
            s.windowGen[i] = w.gen;
        }
    }

    void relock(Seq& s, int32_t node) {
        if (node == s.treeNode) return;
        if (node != RadixTree::kRoot) tree->lockPath(node);
        if (s.treeNode != RadixTree::kRoot) tree->unlockPath(s.treeNode);
        s.treeNode = node;
    }
};

HybridKvCache::HybridKvCache(const KvCacheConfig& config) : impl_(std::make_unique<Impl>(config)) {}
HybridKvCache::~HybridKvCache() = default;

int32_t HybridKvCache::pageSize() const { return impl_->P; }
bool HybridKvCache::hasWindow() const { return impl_->window != nullptr; }
int32_t HybridKvCache::window() const { return impl_->window ? impl_->cfg.window : 0; }
const IntegrityLog& HybridKvCache::log() const { return impl_->log; }
uint64_t HybridKvCache::prefixHitTokens() const { return impl_->prefixHitTotal; }

KvLayerStorage HybridKvCache::layer(int32_t layer) const {
    const Impl& m = *impl_;
    const bool slides = layer >= 0 && layer < int32_t(m.layerSlides.size()) && m.layerSlides[size_t(layer)];
    return slides ? m.windowStore->layer(layer) : m.fullStore->layer(layer);
}

std::span<const int32_t> HybridKvCache::pageTable(int32_t layer, int32_t seq) const {
    const Impl& m = *impl_;
    const Seq* s = m.seq(seq);
    if (!s) return {};
    const bool slides = layer >= 0 && layer < int32_t(m.layerSlides.size()) && m.layerSlides[size_t(layer)];
    return slides ? std::span<const int32_t>(s->windowTable) : std::span<const int32_t>(s->fullTable);
}

int32_t HybridKvCache::openSequence(uint64_t request) { return impl_->open(request); }
void HybridKvCache::closeSequence(int32_t seq) { impl_->close(seq); }

PrefixMatch HybridKvCache::matchPrefix(std::span<const int32_t> prompt) const {
    const Impl& m = *impl_;
    RadixTree::Match t = m.tree->match(prompt);
    PrefixMatch r{t.cachedTokens, t.reuseTokens, t.cachedTokens - t.reuseTokens};
    for (int64_t i = 0; i < t.reuseTokens / m.P; ++i) r.evictableReuseTokens += m.tree->lock(t.nodes[size_t(i)]) == 0;
    r.evictableReuseTokens *= m.P;
    return r;
}

PrefixMatch HybridKvCache::attachPrefix(int32_t seqId, std::span<const int32_t> prompt) {
    Impl& m = *impl_;
    Seq* s = m.seq(seqId);
    if (!s || s->length != 0 || !s->fullTable.empty()) return {};
    RadixTree::Match t = m.tree->match(prompt);
    const int64_t pages = t.reuseTokens / m.P;
    // Only the last window before the match end is needed from the window pool.
    const int64_t firstWindowPage = m.window ? std::max<int64_t>(0, t.reuseTokens - m.cfg.window + 1) / m.P : 0;
    for (int64_t i = 0; i < pages; ++i) {
        const int32_t node = t.nodes[size_t(i)];
        const PageRef f = m.tree->fullPage(node);
        m.full.retain(f, s->request);
        s->fullTable.push_back(f.page);
        s->fullGen.push_back(f.gen);
        if (m.window) {
            PageRef w = i >= firstWindowPage ? m.tree->windowPage(node) : PageRef{};
            if (w.valid()) m.window->pages().retain(w, s->request);
            s->windowTable.push_back(w.valid() ? w.page : -1);
            s->windowGen.push_back(w.gen);
        }
    }
    s->length = pages * m.P;
    s->windowStart = firstWindowPage * m.P;
    s->prefixHit = s->length;
    m.prefixHitTotal += uint64_t(s->length);
    if (pages > 0) {
        m.relock(*s, t.nodes[size_t(pages - 1)]);
        m.tree->touchPath(s->treeNode);
    }
    return {t.cachedTokens, t.reuseTokens, t.cachedTokens - t.reuseTokens};
}

int64_t HybridKvCache::cachePrefix(int32_t seqId, std::span<const int32_t> tokens) {
    Impl& m = *impl_;
    Seq* s = m.seq(seqId);
    if (!s) return 0;
    const int64_t pages = std::min<int64_t>(int64_t(tokens.size()), s->length) / m.P;
    if (pages == 0) return 0;
    std::vector<int32_t> path;
    int64_t created = 0;
    int32_t cur = RadixTree::kRoot;
    for (int64_t i = 0; i < pages; ++i) {
        const auto key = tokens.subspan(size_t(i * m.P), size_t(m.P));
        const PageRef f{s->fullTable[size_t(i)], s->fullGen[size_t(i)]};
        const PageRef w = m.window ? PageRef{s->windowTable[size_t(i)], s->windowGen[size_t(i)]} : PageRef{};
        int32_t c = m.tree->child(cur, key);
        if (c < 0) {
            c = m.tree->addChild(cur, key, f, w);
            if (c < 0) break;
            ++created;
        } else if (m.tree->fullPage(c).page != f.page) {
            // The same tokens' KV computed twice (a prefix recomputed because its
            // window content was evicted, or two requests prefilling it side by
            // side). Keep one copy: a sequence must never lock tree pages it
            // does not use, or they sit pinned beside its own and a request
            // that fits the pool alone is refused.
            if (!w.valid() || m.tree->windowPage(c).valid()) {
                m.useTreePages(*s, size_t(i), c);
            } else if (!m.tree->replacePages(c, f, w)) {
                break;  // another running sequence uses the tree's copy; ours stays uncached
            }
        }
        path.push_back(c);
        cur = c;
    }
    if (path.empty()) return created;
    m.tree->touchPath(path.back());
    if (s->treeNode == RadixTree::kRoot || m.tree->depth(path.back()) >= m.tree->depth(s->treeNode))
        m.relock(*s, path.back());
    return created;
}

StepNeed HybridKvCache::need(int32_t seqId, int64_t newTokens) const {
    const Seq* s = impl_->seq(seqId);
    if (!s) return {};
    return stepNeed(s->length, newTokens, impl_->P, hasWindow());
}

StepNeed HybridKvCache::need(const PrefixMatch& match, int64_t newTokens) const {
    return stepNeed(match.reuseTokens, newTokens, impl_->P, hasWindow());
}

KvResult HybridKvCache::allocate(int32_t seqId, int64_t newTokens) {
    Impl& m = *impl_;
    Seq* s = m.seq(seqId);
    if (!s || newTokens < 0) return KvResult::BadArgument;
    const StepNeed n = stepNeed(s->length, newTokens, m.P, hasWindow());
    if (KvResult r = m.appendPages(*s, n.fullPages); r != KvResult::Ok) return r;
    s->length += newTokens;
    return KvResult::Ok;
}

int64_t HybridKvCache::releaseOutOfWindow(int32_t seqId) {
    Impl& m = *impl_;
    Seq* s = m.seq(seqId);
    if (!s || !m.window) return 0;
    // Keys the next token (position length) attends to start at length - W + 1.
    const int64_t target = floorToPage(std::max<int64_t>(0, s->length - m.cfg.window + 1), m.P);
    if (target <= s->windowStart) return 0;
    int64_t released = 0;
    for (int64_t i = s->windowStart / m.P; i < target / m.P; ++i) {
        if (s->windowTable[size_t(i)] >= 0) {
            m.releaseWindowEntry(*s, size_t(i));
            ++released;
        }
    }
    s->windowStart = target;
    return released;
}

KvResult HybridKvCache::truncate(int32_t seqId, int64_t length) {
    Impl& m = *impl_;
    Seq* s = m.seq(seqId);
    if (!s || length < 0 || length > s->length) return KvResult::BadArgument;
    // The window entries the next token attends to must still be there.
    if (m.window && s->windowStart > std::max<int64_t>(0, length - m.cfg.window + 1)) return KvResult::BadArgument;
    const size_t keep = size_t(pagesFor(length, m.P));
    for (size_t i = keep; i < s->fullTable.size(); ++i) {
        if (m.tree->nodeOfFull(s->fullTable[i]) >= 0) {
            m.log.record("request " + std::to_string(s->request) + " truncates to " + std::to_string(length) +
                         " tokens but full page " + std::to_string(s->fullTable[i]) + " past it is in the prefix tree");
            return KvResult::Violation;
        }
    }
    for (size_t i = s->fullTable.size(); i-- > keep;) {
        if (m.window) m.releaseWindowEntry(*s, i);  // unbinds before the full page goes
        m.releaseFullEntry(*s, i);
        s->fullTable.pop_back();
        s->fullGen.pop_back();
        if (m.window) {
            s->windowTable.pop_back();
            s->windowGen.pop_back();
        }
    }
    s->length = length;
    return KvResult::Ok;
}

int64_t HybridKvCache::freePages(PoolKind pool) const {
    const PagePool* p = impl_->poolOf(pool);
    return p ? p->freeCount() : 0;
}

int64_t HybridKvCache::evictablePages(PoolKind pool) const {
    return pool == PoolKind::Full ? impl_->evictableFull() : impl_->evictableWindow();
}

int64_t HybridKvCache::availablePages(PoolKind pool) const { return freePages(pool) + evictablePages(pool); }

int64_t HybridKvCache::capacityPages(PoolKind pool) const {
    const PagePool* p = impl_->poolOf(pool);
    return p ? p->capacity() : 0;
}

int64_t HybridKvCache::evict(PoolKind pool, int64_t pages) {
    if (pages <= 0) return 0;
    return pool == PoolKind::Full ? impl_->tree->evictFull(pages) : impl_->tree->evictWindow(pages);
}

ResizeResult HybridKvCache::resize(PoolKind poolKind, int64_t tokens) {
    Impl& m = *impl_;
    ResizeResult res;
    PagePool* pool = m.poolOf(poolKind);
    const std::string name = poolKindName(poolKind);
    if (!pool) {
        res.result = KvResult::BadArgument;
        res.message = "the model has no sliding-window layers, so there is no window pool to resize";
        return res;
    }
    res.capacityTokens = int64_t(pool->capacity()) * m.P;
    const int64_t floorTokens = poolKind == PoolKind::Full ? m.cfg.fullFloorTokens : m.cfg.windowFloorTokens;
    if (tokens < 0 || tokens < floorTokens) {
        res.result = KvResult::BadArgument;
        res.message = "refused to resize the " + name + " pool to " + std::to_string(tokens) +
                      " tokens: below its floor of " + std::to_string(floorTokens) + " tokens";
        return res;
    }
    if (pagesFor(tokens, m.P) > std::numeric_limits<int32_t>::max() / 2) {
        res.result = KvResult::BadArgument;
        res.message = "refused to resize the " + name + " pool to " + std::to_string(tokens) + " tokens: too large";
        return res;
    }
    int32_t target = int32_t(pagesFor(tokens, m.P));
    KvStorage& store = poolKind == PoolKind::Full ? *m.fullStore : *m.windowStore;
    const int32_t cap = pool->capacity();

    if (target >= cap) {
        if (!store.resize(target)) {
            res.result = KvResult::BadArgument;
            res.message = "cannot allocate memory for a " + name + " pool of " + std::to_string(tokens) + " tokens";
            return res;
        }
        if (poolKind == PoolKind::Full) {
            m.full.grow(target);
            if (m.window) m.window->setFullCapacity(target);
            m.tree->setFullCapacity(target);
        } else {
            m.window->grow(target);
            m.tree->setWindowCapacity(target);
        }
        res.capacityTokens = int64_t(target) * m.P;
        return res;
    }

    // Shrink: evict cached pages until the live ones fit, never below what is in use.
    const int32_t inUse = cap - pool->freeCount() - int32_t(evictablePages(poolKind));
    if (target < inUse) {
        res.message = "the " + name + " pool holds " + std::to_string(int64_t(inUse) * m.P) +
                      " tokens in use; shrunk to that instead of " + std::to_string(tokens);
        target = inUse;
    }
    const int64_t mustFree = int64_t(cap - target) - pool->freeCount();
    if (mustFree > 0) res.evictedPages = evict(poolKind, mustFree);
    if (cap - pool->freeCount() > target) {
        res.result = KvResult::Violation;
        res.message = "the " + name + " pool could not free enough pages to shrink (counters disagree)";
        m.log.record(res.message);
        return res;
    }
    // Compaction: move every live page at or above the target below it, then
    // rewrite every holder (sequences, tree, bindings).
    std::vector<PageRef> moved(static_cast<size_t>(cap));
    int32_t cursor = 0;
    for (int32_t p = target; p < cap; ++p) {
        if (pool->state(p) == PageState::Free) continue;
        while (cursor < target && pool->state(cursor) != PageState::Free) ++cursor;
        const int32_t to = cursor;
        PageRef ref = poolKind == PoolKind::Full ? m.full.movePage(p, to) : m.window->moveWindowPage(p, to);
        store.copyPage(p, to);
        moved[size_t(p)] = ref;
        if (poolKind == PoolKind::Full) {
            if (m.window) m.window->moveFullPage(p, to);
            m.tree->fullPageMoved(p, ref);
        } else {
            m.tree->windowPageMoved(p, ref);
        }
    }
    for (Seq& s : m.seqs) {
        if (!s.open) continue;
        auto& table = poolKind == PoolKind::Full ? s.fullTable : s.windowTable;
        auto& gens = poolKind == PoolKind::Full ? s.fullGen : s.windowGen;
        for (size_t i = 0; i < table.size(); ++i) {
            if (table[i] >= target && moved[size_t(table[i])].valid()) {
                gens[i] = moved[size_t(table[i])].gen;
                table[i] = moved[size_t(table[i])].page;
            }
        }
    }
    if (!store.resize(target)) {
        res.result = KvResult::BadArgument;
        res.message = "cannot allocate memory to shrink the " + name + " pool (pages compacted, capacity kept)";
        return res;
    }
    if (poolKind == PoolKind::Full) {
        m.full.shrinkTo(target);
        if (m.window) m.window->setFullCapacity(target);
        m.tree->setFullCapacity(target);
    } else {
        m.window->shrinkTo(target);
        m.tree->setWindowCapacity(target);
    }
    res.capacityTokens = int64_t(target) * m.P;
    return res;
}

bool HybridKvCache::checkCounters() {
    Impl& m = *impl_;
    bool ok = m.full.checkCounters();
    if (m.window) ok = m.window->pages().checkCounters() && ok;
    if (m.tree->evictableFullCount() > m.full.cachedCount()) {
        m.log.record("evictable full pages " + std::to_string(m.tree->evictableFullCount()) + " > cached " +
                     std::to_string(m.full.cachedCount()));
        ok = false;
    }
    return ok;
}

bool HybridKvCache::checkIntegrity() {
    Impl& m = *impl_;
    ++m.log.checks;
    const uint64_t before = m.log.violations;
    const int32_t fc = m.full.capacity();
    const int32_t wc = m.window ? m.window->pages().capacity() : 0;
    std::vector<int32_t> fullRefs(size_t(fc), 0), windowRefs(size_t(wc), 0);
    std::vector<uint8_t> fullInTree(size_t(fc), 0), windowInTree(size_t(wc), 0);
    m.tree->countReferences(fullRefs, fullInTree, windowRefs, windowInTree);
    std::vector<int32_t> locks(size_t(m.tree->nodeSlots()), 0);
    const int64_t W = m.window ? m.cfg.window : 0;

    for (int32_t id = 0; id < int32_t(m.seqs.size()); ++id) {
        const Seq& s = m.seqs[size_t(id)];
        if (!s.open) continue;
        const std::string me = "sequence " + std::to_string(id) + " (request " + std::to_string(s.request) + ")";
        if (int64_t(s.fullTable.size()) != pagesFor(s.length, m.P))
            m.log.record(me + ": " + std::to_string(s.fullTable.size()) + " full pages for " +
                         std::to_string(s.length) + " tokens");
        for (size_t i = 0; i < s.fullTable.size(); ++i) {
            const int32_t f = s.fullTable[i];
            if (!m.full.contains(f)) {
                m.log.record(me + " holds out-of-range full page " + std::to_string(f));
                continue;
            }
            ++fullRefs[size_t(f)];
            if (m.full.generation(f) != s.fullGen[i])
                m.log.record(me + " holds a stale handle (gen " + std::to_string(s.fullGen[i]) + ") to " +
                             m.full.describe(f));
        }
        if (m.window) {
            if (s.windowTable.size() != s.fullTable.size())
                m.log.record(me + ": window table has " + std::to_string(s.windowTable.size()) + " entries, full " +
                             std::to_string(s.fullTable.size()));
            if (s.windowStart % m.P != 0 || s.windowStart > std::max<int64_t>(0, s.length - W + 1))
                m.log.record(me + ": window boundary " + std::to_string(s.windowStart) +
                             " not page-aligned or past length - W + 1 (length " + std::to_string(s.length) + ")");
            for (size_t i = 0; i < s.windowTable.size() && i < s.fullTable.size(); ++i) {
                const int32_t w = s.windowTable[i];
                const bool below = int64_t(i) * m.P < s.windowStart;
                if (below != (w < 0)) {
                    m.log.record(me + ": window entry " + std::to_string(i) + " is " + std::to_string(w) +
                                 " with boundary " + std::to_string(s.windowStart));
                }
                if (w < 0) continue;
                if (!m.window->pages().contains(w)) {
                    m.log.record(me + " holds out-of-range window page " + std::to_string(w));
                    continue;
                }
                ++windowRefs[size_t(w)];
                if (m.window->pages().generation(w) != s.windowGen[i])
                    m.log.record(me + " holds a stale handle (gen " + std::to_string(s.windowGen[i]) + ") to " +
                                 m.window->pages().describe(w));
                if (m.window->fullOf(w) != s.fullTable[i])
                    m.log.record(me + ": window page " + std::to_string(w) + " at entry " + std::to_string(i) +
                                 " is bound to full page " + std::to_string(m.window->fullOf(w)) +
                                 ", the sequence has full page " + std::to_string(s.fullTable[i]));
            }
        }
        // Its locked path, by depth; every cached page it holds must be on it.
        std::vector<int32_t> lockedPath;
        if (s.treeNode != RadixTree::kRoot) {
            if (!m.tree->alive(s.treeNode)) {
                m.log.record(me + " locks dead tree node " + std::to_string(s.treeNode));
            } else {
                for (int32_t n = s.treeNode; n > RadixTree::kRoot; n = m.tree->parent(n)) {
                    ++locks[size_t(n)];
                    lockedPath.push_back(n);
                }
                std::reverse(lockedPath.begin(), lockedPath.end());
            }
        }
        for (size_t i = 0; i < s.fullTable.size(); ++i) {
            const int32_t node = m.tree->nodeOfFull(s.fullTable[i]);
            if (node >= 0 && (i >= lockedPath.size() || lockedPath[i] != node))
                m.log.record(me + " holds full page " + std::to_string(s.fullTable[i]) + " of tree node " +
                             std::to_string(node) + " without locking it");
        }
    }
    m.full.checkAgainst(fullRefs, fullInTree);
    if (m.window) {
        m.window->pages().checkAgainst(windowRefs, windowInTree);
        m.window->checkBindings(m.full);
    }
    m.tree->check(locks);
    checkCounters();
    return m.log.violations == before;
}

void HybridKvCache::fillStatus(CacheStatus& out) const {
    const Impl& m = *impl_;
    auto fill = [&](PoolStatus& ps, const PagePool* pool, PoolKind kind, int64_t floor, const KvStorage& store) {
        ps = PoolStatus{};
        ps.kind = kind;
        ps.floorTokens = floor;
        ps.bytesPerToken = store.bytesPerToken();
        if (!pool) return;
        ps.capacityTokens = int64_t(pool->capacity()) * m.P;
        ps.freeTokens = int64_t(pool->freeCount()) * m.P;
        ps.ownedTokens = int64_t(pool->ownedCount()) * m.P;
        ps.cachedTokens = int64_t(pool->cachedCount()) * m.P;
        ps.totalBytes = store.totalBytes();
    };
    fill(out.full, &m.full, PoolKind::Full, m.cfg.fullFloorTokens, *m.fullStore);
    fill(out.window, m.window ? &m.window->pages() : nullptr, PoolKind::Window, m.cfg.windowFloorTokens, *m.windowStore);
    out.integrityChecks = m.log.checks;
    out.violations = m.log.violations;
    out.violationDetails.assign(m.log.details.begin(), m.log.details.end());
    out.prefixHitTokens = m.prefixHitTotal;
}

SequenceInfo HybridKvCache::sequenceInfo(int32_t seqId) const {
    const Impl& m = *impl_;
    SequenceInfo info;
    const Seq* s = m.seq(seqId);
    if (!s) return info;
    info.request = s->request;
    info.length = s->length;
    info.fullTokens = int64_t(s->fullTable.size()) * m.P;
    int64_t w = 0;
    for (int32_t p : s->windowTable) w += p >= 0;
    info.windowTokens = w * m.P;
    info.windowStart = s->windowStart;
    info.prefixHitTokens = s->prefixHit;
    return info;
}

} // namespace weir::kv
