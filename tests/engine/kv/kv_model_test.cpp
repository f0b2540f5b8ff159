// Model-based random test of the allocator and the prefix tree. A deliberately
// simple reference model (abstract page ids, the tree as a map from whole
// prefixes to pages, every count recomputed from scratch) runs the same random
// operations as HybridKvCache: open + attach, prefill chunks, decode steps,
// out-of-window release, caching prefixes, finish/cancel, explicit
// eviction and live resizing. After every operation the results, every pool
// counter and every sequence are compared, the real page ids are checked to be
// a bijection with the model's live pages (no page with two owners), every
// page's storage is checked to still carry the content written for it, and
// checkCounters() (O(1)) runs; checkIntegrity() (full recount) runs every
// kFullCheckEvery operations and at the end.
#include "tests/support/weir_test.h"

#include <cstdio>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/kv/hybrid_kv_cache.h"

using namespace weir;
using namespace weir::kv;

namespace {

constexpr int P = 4;
constexpr int W = 7;  // not a page multiple on purpose
constexpr int kFullPages = 48, kWindowPages = 24;
constexpr int64_t kFullFloor = 64, kWindowFloor = 40;
constexpr int kMaxSeqs = 6;
constexpr int64_t kMaxLen = 60;
const int kFullCheckEvery = std::getenv("WEIR_KV_CHECK_EVERY") ? std::atoi(std::getenv("WEIR_KV_CHECK_EVERY")) : 16;

using Key = std::vector<int32_t>;

struct RefNode {
    int full = -1, window = -1;  // abstract page ids; window -1 = tombstone
    uint64_t lastUse = 0, serial = 0;
};

struct RefSeq {
    uint64_t request = 0;
    std::vector<int32_t> stream;  // the sequence's tokens, known ahead
    int64_t length = 0, windowStart = 0;
    std::vector<int> full, win;
    Key lockKey;                  // prefix of the deepest tree node it uses
};

// The reference: brute force over small sets.
struct Ref {
    int fullCap = kFullPages, winCap = kWindowPages;
    std::map<Key, RefNode> tree;
    std::map<int32_t, RefSeq> seqs;  // by the cache's sequence id
    int nextPage = 0;
    uint64_t clock = 0, serial = 0;

    static int64_t pagesFor(int64_t t) { return (t + P - 1) / P; }

    // Distinct live pages, sorted.
    static std::vector<int> distinct(std::vector<int> v) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return v;
    }
    std::vector<int> liveFull() const {
        std::vector<int> v;
        for (auto& [k, n] : tree) v.push_back(n.full);
        for (auto& [id, q] : seqs) v.insert(v.end(), q.full.begin(), q.full.end());
        return distinct(std::move(v));
    }
    std::vector<int> liveWindow() const {
        std::vector<int> v;
        for (auto& [k, n] : tree) if (n.window >= 0) v.push_back(n.window);
        for (auto& [id, q] : seqs) for (int w : q.win) if (w >= 0) v.push_back(w);
        return distinct(std::move(v));
    }
    int freeFull() const { return fullCap - int(liveFull().size()); }
    int freeWindow() const { return winCap - int(liveWindow().size()); }
    bool locked(const Key& k) const {
        for (auto& [id, q] : seqs)
            if (q.lockKey.size() >= k.size() && std::equal(k.begin(), k.end(), q.lockKey.begin())) return true;
        return false;
    }
    bool leaf(const Key& k) const {
        for (auto& [other, n] : tree)
            if (other.size() > k.size() && std::equal(k.begin(), k.end(), other.begin())) return false;
        return true;
    }
    bool windowUsedBySeq(int w) const {
        for (auto& [id, q] : seqs)
            if (std::find(q.win.begin(), q.win.end(), w) != q.win.end()) return true;
        return false;
    }
    int evictableFull() const {
        int n = 0;
        for (auto& [k, node] : tree) n += !locked(k);
        return n;
    }
    int evictableWindow() const {
        int n = 0;
        for (auto& [k, node] : tree) n += node.window >= 0 && !windowUsedBySeq(node.window);
        return n;
    }
    int cachedWindow() const {
        int n = 0;
        for (auto& [k, node] : tree) n += node.window >= 0;
        return n;
    }

    bool evictFullOne() {
        const Key* best = nullptr;
        for (auto& [k, n] : tree) {
            if (locked(k) || !leaf(k)) continue;
            if (!best || std::make_pair(n.lastUse, n.serial) <
                             std::make_pair(tree.at(*best).lastUse, tree.at(*best).serial))
                best = &k;
        }
        if (!best) return false;
        tree.erase(*best);
        return true;
    }
    bool evictWindowOne() {
        RefNode* best = nullptr;
        for (auto& [k, n] : tree) {
            if (n.window < 0 || windowUsedBySeq(n.window)) continue;
            if (!best || std::make_pair(n.lastUse, n.serial) < std::make_pair(best->lastUse, best->serial)) best = &n;
        }
        if (!best) return false;
        best->window = -1;
        return true;
    }

    KvResult makeRoom(int nf, int nw) {
        if (freeFull() + evictableFull() < nf) return KvResult::OutOfFullPages;
        if (nw > 0 && freeWindow() + evictableWindow() < nw) return KvResult::OutOfWindowPages;
        while (freeFull() < nf) evictFullOne();
        while (freeWindow() < nw) evictWindowOne();
        return KvResult::Ok;
    }

    void appendPages(RefSeq& s, int n) {
        for (int i = 0; i < n; ++i) {
            s.full.push_back(nextPage++);
            s.win.push_back(nextPage++);
        }
    }

    KvResult allocate(RefSeq& s, int64_t n) {
        const int pages = int(pagesFor(s.length + n) - pagesFor(s.length));
        if (pages > 0) {
            KvResult r = makeRoom(pages, pages);
            if (r != KvResult::Ok) return r;
            appendPages(s, pages);
        }
        s.length += n;
        return KvResult::Ok;
    }

    int64_t releaseOutOfWindow(RefSeq& s) {
        const int64_t target = std::max<int64_t>(0, s.length - W + 1) / P * P;
        if (target <= s.windowStart) return 0;
        int64_t n = 0;
        for (int64_t i = s.windowStart / P; i < target / P; ++i)
            if (s.win[size_t(i)] >= 0) {
                s.win[size_t(i)] = -1;
                ++n;
            }
        s.windowStart = target;
        return n;
    }

    Key keyOf(const std::vector<int32_t>& t, int64_t pages) const { return Key(t.begin(), t.begin() + pages * P); }

    PrefixMatch match(const std::vector<int32_t>& prompt) const {
        int64_t k = 0;
        const int64_t maxPages = prompt.empty() ? 0 : int64_t(prompt.size() - 1) / P;
        while (k < maxPages && tree.count(keyOf(prompt, k + 1))) ++k;
        PrefixMatch m;
        m.cachedTokens = k * P;
        for (int64_t j = k; j >= 0; --j) {
            bool ok = true;
            for (int64_t page = std::max<int64_t>(0, j * P - W + 1) / P; page < j && ok; ++page)
                ok = tree.at(keyOf(prompt, page + 1)).window >= 0;
            if (ok) {
                m.reuseTokens = j * P;
                break;
            }
        }
        m.windowRecomputeTokens = m.cachedTokens - m.reuseTokens;
        return m;
    }

    void touch(const Key& k) {
        ++clock;
        for (int64_t pages = 1; pages * P <= int64_t(k.size()); ++pages) tree.at(keyOf(k, pages)).lastUse = clock;
    }

    PrefixMatch attach(RefSeq& s, const std::vector<int32_t>& prompt) {
        const PrefixMatch m = match(prompt);
        const int64_t pages = m.reuseTokens / P;
        const int64_t firstWin = std::max<int64_t>(0, m.reuseTokens - W + 1) / P;
        for (int64_t i = 0; i < pages; ++i) {
            const RefNode& n = tree.at(keyOf(prompt, i + 1));
            s.full.push_back(n.full);
            s.win.push_back(i >= firstWin ? n.window : -1);
        }
        s.length = pages * P;
        s.windowStart = firstWin * P;
        if (pages > 0) {
            s.lockKey = keyOf(prompt, pages);
            touch(s.lockKey);
        }
        return m;
    }

    int64_t cachePrefix(RefSeq& s) {
        const int64_t pages = s.length / P;
        if (pages == 0) return 0;
        int64_t created = 0, reached = 0;
        for (int64_t i = 0; i < pages; ++i) {
            Key k = keyOf(s.stream, i + 1);
            auto it = tree.find(k);
            if (it == tree.end()) {
                RefNode n;
                n.full = s.full[size_t(i)];
                n.window = s.win[size_t(i)];
                n.serial = ++serial;
                tree.emplace(std::move(k), n);
                ++created;
            } else if (it->second.full != s.full[size_t(i)]) {
                // The same tokens computed twice: one copy stays. The sequence
                // takes the tree's pages, unless it holds window content the
                // tree lost; then an unlocked node takes the sequence's pages,
                // and a locked one ends the walk.
                RefNode& n = it->second;
                if (s.win[size_t(i)] < 0 || n.window >= 0) {
                    s.full[size_t(i)] = n.full;
                    if (s.win[size_t(i)] >= 0) s.win[size_t(i)] = n.window;
                } else if (!locked(k)) {
                    n.full = s.full[size_t(i)];
                    n.window = s.win[size_t(i)];
                } else {
                    break;
                }
            }
            reached = i + 1;
        }
        if (reached == 0) return created;
        Key path = keyOf(s.stream, reached);
        touch(path);
        if (s.lockKey.empty() || path.size() >= s.lockKey.size()) s.lockKey = path;
        return created;
    }
};

uint64_t envSeed() {
    const char* s = std::getenv("WEIR_KV_SEED");
    return s ? std::strtoull(s, nullptr, 10) : 20240611ull;
}

} // namespace

static KvCacheConfig config() {
    KvCacheConfig c;
    c.pageSize = P;
    c.window = W;
    c.fullTokens = kFullPages * P;
    c.windowTokens = kWindowPages * P;
    c.fullFloorTokens = kFullFloor;
    c.windowFloorTokens = kWindowFloor;
    c.layers = {{false, 32}, {true, 32}};  // layer 0 full, layer 1 window (small rows)
    return c;
}

// Abstract page <-> real page, per pool. A real page seen for two live
// abstract pages is a page with two owners.
namespace {

struct Bijection {
    std::unordered_map<int, int> a2r, r2a;
    void clear() { a2r.clear(); r2a.clear(); }
    // Returns an error message or empty.
    std::string see(int a, int r, const std::vector<int>& live) {
        auto ar = a2r.find(a);
        if (ar != a2r.end() && ar->second != r)
            return "model page " + std::to_string(a) + " was real page " + std::to_string(ar->second) +
                   ", now " + std::to_string(r);
        auto ra = r2a.find(r);
        if (ra != r2a.end() && ra->second != a) {
            if (std::binary_search(live.begin(), live.end(), ra->second))
                return "real page " + std::to_string(r) + " is held as two different live pages (model " +
                       std::to_string(ra->second) + " and " + std::to_string(a) + ")";
            a2r.erase(ra->second);
        }
        a2r[a] = r;
        r2a[r] = a;
        return {};
    }
};

} // namespace

WEIR_TEST(KvModel, randomOperationsAgainstReference) {
    const uint64_t seed = envSeed();
    const int64_t ops = std::getenv("WEIR_KV_OPS") ? std::atoll(std::getenv("WEIR_KV_OPS")) : 1000000;
    std::mt19937_64 rng(seed);
    auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };

    HybridKvCache cache(config());
    Ref ref;
    Bijection fullMap, winMap;
    // Every page's storage carries its model id (first 4 bytes of its
    // first K row), written when the page first shows up and compared on
    // every later look: content must follow its page through resizes
    // (compaction).
    std::vector<uint8_t> stamped;  // by model page id
    auto pageBytes = [&](int32_t layer, int32_t page) {
        const KvLayerStorage st = cache.layer(layer);
        return st.k + size_t(page) * size_t(P) * st.rowBytes;
    };
    auto stampOrCheck = [&](int32_t layer, int a, int32_t page) -> std::string {
        uint8_t* bytes = pageBytes(layer, page);
        if (size_t(a) >= stamped.size()) stamped.resize(size_t(a) + 1024, 0);
        if (!stamped[size_t(a)]) {
            std::memcpy(bytes, &a, sizeof a);
            stamped[size_t(a)] = 1;
            return {};
        }
        int got = 0;
        std::memcpy(&got, bytes, sizeof got);
        if (got == a) return {};
        return "layer " + std::to_string(layer) + " page " + std::to_string(page) + " holds the content of model page " +
               std::to_string(got) + ", expected " + std::to_string(a);
    };
    uint64_t nextRequest = 1;
    std::vector<std::vector<int32_t>> docs(4);
    for (auto& d : docs)
        for (int i = 0; i < 48; ++i) d.push_back(int32_t(uni(1, 1000)));
    auto randomPrompt = [&]() {
        const auto& d = docs[size_t(uni(0, 3))];
        std::vector<int32_t> p(d.begin(), d.begin() + uni(0, 44));
        for (int64_t i = uni(1, 10); i > 0; --i) p.push_back(int32_t(uni(1, 3)));
        return p;
    };
    auto pickSeq = [&]() -> int32_t {
        if (ref.seqs.empty()) return -1;
        auto it = ref.seqs.begin();
        std::advance(it, uni(0, int64_t(ref.seqs.size()) - 1));
        return it->first;
    };
    auto growStream = [&](RefSeq& s, int64_t upTo) {
        while (int64_t(s.stream.size()) < upTo) s.stream.push_back(int32_t(uni(1, 4)));
    };

    std::map<std::string, int64_t> counts;
    int64_t hits = 0, recompute = 0, allocFails = 0, fullChecks = 0;
    std::string op;
    auto fail = [&](int64_t i, const std::string& what) {
        return "op " + std::to_string(i) + " (" + op + ", seed " + std::to_string(seed) + "): " + what;
    };

    int64_t done = 0;  // operations carried out (draws that found nothing to do are not counted)
    for (int64_t i = 0; done < ops; ++i) {
        const int64_t r = uni(0, 99);
        std::string err;
        bool resized = false;
        if (r < 10) {  // open + attach a prompt
            op = "open+attach";
            if (int(ref.seqs.size()) >= kMaxSeqs) continue;
            const auto prompt = randomPrompt();
            const uint64_t req = nextRequest++;
            const int32_t id = cache.openSequence(req);
            if (id < 0 || ref.seqs.count(id)) FAIL(fail(i, "bad sequence id").c_str());
            RefSeq& s = ref.seqs[id];
            s.request = req;
            s.stream = prompt;
            const PrefixMatch want = ref.attach(s, prompt);
            const PrefixMatch got = cache.attachPrefix(id, prompt);
            if (got.cachedTokens != want.cachedTokens || got.reuseTokens != want.reuseTokens ||
                got.windowRecomputeTokens != want.windowRecomputeTokens)
                err = "match " + std::to_string(got.cachedTokens) + "/" + std::to_string(got.reuseTokens) +
                      ", reference " + std::to_string(want.cachedTokens) + "/" + std::to_string(want.reuseTokens);
            hits += want.reuseTokens;
            recompute += want.windowRecomputeTokens;
        } else if (r < 46) {  // decode step or prefill chunk
            const bool chunk = r >= 36;
            op = chunk ? "prefill chunk" : "decode step";
            const int32_t id = pickSeq();
            if (id < 0) continue;
            RefSeq& s = ref.seqs[id];
            const int64_t n = chunk ? uni(2, 3 * P + 1) : 1;
            if (s.length + n > kMaxLen) continue;
            growStream(s, s.length + n);
            // need() is what admission sees; allocate() must take exactly that.
            const StepNeed need = cache.need(id, n);
            const int64_t newPages = Ref::pagesFor(s.length + n) - Ref::pagesFor(s.length);
            const KvResult want = ref.allocate(s, n);
            const KvResult got = cache.allocate(id, n);
            if (got != want) err = std::string("allocate ") + kvResultName(got) + ", reference " + kvResultName(want);
            if (need.fullPages != newPages || need.windowPages != newPages)
                err = "need() says " + std::to_string(need.fullPages) + "/" + std::to_string(need.windowPages) +
                      " pages, the step takes " + std::to_string(newPages);
            allocFails += want != KvResult::Ok;
        } else if (r < 60) {
            op = "release out of window";
            const int32_t id = pickSeq();
            if (id < 0) continue;
            const int64_t want = ref.releaseOutOfWindow(ref.seqs[id]);
            const int64_t got = cache.releaseOutOfWindow(id);
            if (got != want) err = "released " + std::to_string(got) + ", reference " + std::to_string(want);
        } else if (r < 68) {
            op = "cache prefix";
            const int32_t id = pickSeq();
            if (id < 0) continue;
            RefSeq& s = ref.seqs[id];
            const int64_t want = ref.cachePrefix(s);
            const int64_t got = cache.cachePrefix(id, std::span(s.stream).first(size_t(s.length)));
            if (got != want) err = "cached " + std::to_string(got) + " pages, reference " + std::to_string(want);
        } else if (r < 76) {  // finish (cache then close) or cancel (close)
            const int32_t id = pickSeq();
            if (id < 0) continue;
            RefSeq& s = ref.seqs[id];
            if (r < 72) {
                op = "finish";
                const int64_t want = ref.cachePrefix(s);
                const int64_t got = cache.cachePrefix(id, std::span(s.stream).first(size_t(s.length)));
                if (got != want) err = "cached " + std::to_string(got) + ", reference " + std::to_string(want);
            } else {
                op = "cancel";
            }
            ref.seqs.erase(id);
            cache.closeSequence(id);
        } else if (r < 86) {
            const bool full = r < 81;
            op = full ? "evict full" : "evict window";
            const int64_t k = uni(1, 4);
            int64_t want = 0;
            while (want < k && (full ? ref.evictFullOne() : ref.evictWindowOne())) ++want;
            const int64_t got = cache.evict(full ? PoolKind::Full : PoolKind::Window, k);
            if (got != want) err = "evicted " + std::to_string(got) + ", reference " + std::to_string(want);
        } else if (r < 89) {
            const bool full = r < 87;
            op = full ? "resize full" : "resize window";
            const PoolKind kind = full ? PoolKind::Full : PoolKind::Window;
            const int64_t floor = full ? kFullFloor : kWindowFloor;
            const int64_t initial = full ? kFullPages * P : kWindowPages * P;
            const int64_t tokens = uni(floor - 2 * P, 2 * initial);
            int& cap = full ? ref.fullCap : ref.winCap;
            KvResult want = KvResult::Ok;
            int64_t wantEvicted = 0;
            if (tokens < floor) {
                want = KvResult::BadArgument;
            } else {
                int target = int(Ref::pagesFor(tokens));
                if (target < cap) {
                    const int freeNow = full ? ref.freeFull() : ref.freeWindow();
                    const int inUse = cap - freeNow - (full ? ref.evictableFull() : ref.evictableWindow());
                    target = std::max(target, inUse);
                    for (int64_t must = int64_t(cap - target) - freeNow; wantEvicted < must; ++wantEvicted)
                        if (!(full ? ref.evictFullOne() : ref.evictWindowOne())) break;
                }
                cap = target;
            }
            const ResizeResult got = cache.resize(kind, tokens);
            if (got.result != want) err = std::string("resize ") + kvResultName(got.result) + ": " + got.message;
            else if (want == KvResult::Ok && (got.capacityTokens != int64_t(cap) * P || got.evictedPages != wantEvicted))
                err = "resize to " + std::to_string(got.capacityTokens) + " evicting " +
                      std::to_string(got.evictedPages) + ", reference " + std::to_string(cap * P) + " evicting " +
                      std::to_string(wantEvicted);
            resized = want == KvResult::Ok;
        } else {
            op = "match";
            const auto prompt = randomPrompt();
            const PrefixMatch want = ref.match(prompt);
            const PrefixMatch got = cache.matchPrefix(prompt);
            if (got.cachedTokens != want.cachedTokens || got.reuseTokens != want.reuseTokens)
                err = "match " + std::to_string(got.cachedTokens) + "/" + std::to_string(got.reuseTokens) +
                      ", reference " + std::to_string(want.cachedTokens) + "/" + std::to_string(want.reuseTokens);
        }
        ++counts[op];
        ++done;
        if (!err.empty()) FAIL(fail(i, err).c_str());

        // --- compare everything after every operation ---
        if (cache.capacityPages(PoolKind::Full) != ref.fullCap || cache.capacityPages(PoolKind::Window) != ref.winCap)
            FAIL(fail(i, "capacity differs").c_str());
        const std::vector<int> liveF = ref.liveFull(), liveW = ref.liveWindow();
        const int rf = ref.fullCap - int(liveF.size()), rw = ref.winCap - int(liveW.size());
        if (cache.freePages(PoolKind::Full) != rf || cache.freePages(PoolKind::Window) != rw)
            FAIL(fail(i, "free pages " + std::to_string(cache.freePages(PoolKind::Full)) + "/" +
                              std::to_string(cache.freePages(PoolKind::Window)) + ", reference " +
                              std::to_string(rf) + "/" + std::to_string(rw)).c_str());
        if (cache.evictablePages(PoolKind::Full) != ref.evictableFull() ||
            cache.evictablePages(PoolKind::Window) != ref.evictableWindow())
            FAIL(fail(i, "evictable pages differ").c_str());
        CacheStatus st;
        cache.fillStatus(st);
        if (st.full.cachedTokens != int64_t(ref.tree.size()) * P ||
            st.window.cachedTokens != int64_t(ref.cachedWindow()) * P ||
            st.full.ownedTokens != int64_t(ref.fullCap - rf - int(ref.tree.size())) * P)
            FAIL(fail(i, "owned/cached tokens differ").c_str());
        if (resized) {
            fullMap.clear();
            winMap.clear();
        }
        for (auto& [id, s] : ref.seqs) {
            const SequenceInfo info = cache.sequenceInfo(id);
            const auto ft = cache.pageTable(0, id);
            const auto wt = cache.pageTable(1, id);
            if (info.length != s.length || info.windowStart != s.windowStart ||
                info.fullTokens != int64_t(s.full.size()) * P || ft.size() != s.full.size() ||
                wt.size() != s.win.size())
                FAIL(fail(i, "sequence " + std::to_string(id) + " length/boundary/table differ: length " +
                                  std::to_string(info.length) + " vs " + std::to_string(s.length) + ", start " +
                                  std::to_string(info.windowStart) + " vs " + std::to_string(s.windowStart))
                          .c_str());
            int64_t held = 0;
            for (int w : s.win) held += w >= 0;
            if (info.windowTokens != held * P) FAIL(fail(i, "window tokens differ").c_str());
            for (size_t k = 0; k < s.full.size(); ++k) {
                if (ft[k] < 0 || ft[k] >= ref.fullCap) FAIL(fail(i, "full page out of range").c_str());
                if (auto e = fullMap.see(s.full[k], ft[k], liveF); !e.empty()) FAIL(fail(i, e).c_str());
                if (auto e = stampOrCheck(0, s.full[k], ft[k]); !e.empty()) FAIL(fail(i, e).c_str());
                if ((s.win[k] < 0) != (wt[k] < 0) || wt[k] >= ref.winCap)
                    FAIL(fail(i, "window entry " + std::to_string(k) + " is " + std::to_string(wt[k]) +
                                      ", reference " + std::to_string(s.win[k])).c_str());
                if (s.win[k] >= 0)
                    if (auto e = winMap.see(s.win[k], wt[k], liveW); !e.empty())
                        FAIL(fail(i, "window: " + e).c_str());
                if (s.win[k] >= 0)
                    if (auto e = stampOrCheck(1, s.win[k], wt[k]); !e.empty()) FAIL(fail(i, e).c_str());
            }
        }
        if (!cache.checkCounters()) FAIL(fail(i, "counters: " + cache.log().details.front()).c_str());
        if (done % kFullCheckEvery == 0) {
            ++fullChecks;
            if (!cache.checkIntegrity()) FAIL(fail(i, "integrity: " + cache.log().details.front()).c_str());
        }
        if (cache.log().violations != 0) FAIL(fail(i, "violation: " + cache.log().details.front()).c_str());
    }
    REQUIRE(cache.checkIntegrity());
    ++fullChecks;
    // Drain: every page comes back.
    for (auto& [id, s] : ref.seqs) cache.closeSequence(id);
    ref.seqs.clear();
    cache.evict(PoolKind::Full, 1 << 20);
    REQUIRE_EQ(cache.freePages(PoolKind::Full), cache.capacityPages(PoolKind::Full));
    REQUIRE_EQ(cache.freePages(PoolKind::Window), cache.capacityPages(PoolKind::Window));
    REQUIRE(cache.checkIntegrity());
    REQUIRE_EQ(cache.log().violations, uint64_t(0));

    std::string summary = "seed " + std::to_string(seed) + ", " + std::to_string(ops) + " operations:";
    for (auto& [name, n] : counts) summary += " " + name + " " + std::to_string(n) + ";";
    summary += " prefix-hit tokens " + std::to_string(hits) + ", window-recompute tokens " +
               std::to_string(recompute) + ", allocation refusals " + std::to_string(allocFails) +
               ", full recounts " + std::to_string(fullChecks);
    std::printf("  %s\n", summary.c_str());
    // Each kind of operation must have happened for the run to mean anything.
    for (const char* name : {"open+attach", "decode step", "prefill chunk", "release out of window", "cache prefix",
                             "finish", "cancel", "evict full", "evict window", "resize full",
                             "resize window", "match"})
        REQUIRE_MSG(counts[name] > 0, name);
    REQUIRE(hits > 0);
    REQUIRE(recompute > 0);
    REQUIRE(allocFails > 0);
}
