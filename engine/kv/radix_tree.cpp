#include "engine/kv/radix_tree.h"

#include <algorithm>

namespace weir::kv {

RadixTree::RadixTree(int32_t pageSize, int32_t windowTokens, PagePool& full, WindowPool* window, IntegrityLog* log)
    : P_(pageSize), W_(window ? windowTokens : 0), full_(full), window_(window), log_(log) {
    Node root;
    root.live = true;
    nodes_.push_back(std::move(root));
    nLive_ = 0;  // the root is not counted: it holds no page
    nodeOfFull_.assign(size_t(full.capacity()), -1);
    nodeOfWindow_.assign(size_t(window ? window->pages().capacity() : 0), -1);
}

void RadixTree::violation(const std::string& what) const {
    if (log_) log_->record("prefix tree: " + what);
}

bool RadixTree::alive(int32_t node) const {
    return node > kRoot && node < int32_t(nodes_.size()) && nodes_[size_t(node)].live;
}

RadixTree::LruKey RadixTree::lruKey(int32_t node) const {
    return {nodes_[size_t(node)].lastUse, nodes_[size_t(node)].serial, node};
}

int32_t RadixTree::findChild(int32_t node, std::span<const int32_t> key) const {
    for (int32_t c : nodes_[size_t(node)].children) {
        const auto& k = nodes_[size_t(c)].key;
        if (k[0] == key[0] && std::equal(k.begin(), k.end(), key.begin(), key.end())) return c;
    }
    return -1;
}

// Keeps evictableLeaves_ equal to {live non-root nodes with lock 0 and no
// children}. Must be called with the node's current lastUse.
void RadixTree::updateLeafSet(int32_t node) {
    if (node == kRoot) return;
    const Node& n = nodes_[size_t(node)];
    const LruKey key = lruKey(node);
    if (n.live && n.lock == 0 && n.children.empty())
        evictableLeaves_.insert(key);
    else
        evictableLeaves_.erase(key);
}

RadixTree::Match RadixTree::match(std::span<const int32_t> tokens) const {
    Match m;
    const int64_t maxPages = tokens.empty() ? 0 : int64_t(tokens.size() - 1) / P_;
    int32_t cur = kRoot;
    for (int64_t i = 0; i < maxPages; ++i) {
        int32_t c = findChild(cur, tokens.subspan(size_t(i * P_), size_t(P_)));
        if (c < 0) break;
        m.nodes.push_back(c);
        cur = c;
    }
    const int64_t k = int64_t(m.nodes.size());
    m.cachedTokens = k * P_;
    if (W_ <= 0) {
        m.reuseTokens = m.cachedTokens;
        return m;
    }
    // run[i]: window pages present in a row ending at page i.
    std::vector<int64_t> run(size_t(k), 0);
    for (int64_t i = 0; i < k; ++i) {
        const bool present = nodes_[size_t(m.nodes[size_t(i)])].window.valid();
        run[size_t(i)] = present ? (i > 0 ? run[size_t(i - 1)] : 0) + 1 : 0;
    }
    // A match of j pages is usable when pages covering [j*P - W + 1, j*P) all
    // have window content (the keys the first new token attends to).
    for (int64_t j = k; j >= 0; --j) {
        if (j == 0) {
            m.reuseTokens = 0;
            break;
        }
        const int64_t firstPos = std::max<int64_t>(0, j * P_ - W_ + 1);
        const int64_t needed = j - firstPos / P_;
        if (run[size_t(j - 1)] >= needed) {
            m.reuseTokens = j * P_;
            break;
        }
    }
    return m;
}

int32_t RadixTree::newNode(int32_t parent, std::span<const int32_t> key, PageRef full, PageRef window) {
    int32_t id;
    if (!freeSlots_.empty()) {
        id = freeSlots_.back();
        freeSlots_.pop_back();
    } else {
        id = int32_t(nodes_.size());
        nodes_.emplace_back();
    }
    Node& n = nodes_[size_t(id)];
    n = Node{};
    n.parent = parent;
    n.depth = nodes_[size_t(parent)].depth + 1;
    n.key.assign(key.begin(), key.end());
    n.full = full;
    n.window = window;
    n.lock = 0;
    n.lastUse = clock_;
    n.serial = ++serial_;
    n.live = true;
    nodes_[size_t(parent)].children.push_back(id);
    nodeOfFull_[size_t(full.page)] = id;
    if (window.valid()) {
        nodeOfWindow_[size_t(window.page)] = id;
        windowHolders_.insert(lruKey(id));
    }
    ++nLive_;
    ++nUnlocked_;
    updateLeafSet(parent);  // the parent is no longer a leaf
    updateLeafSet(id);
    return id;
}

// The tree's reference to a window page bound to `fullPage`; an invalid
// handle (tombstone) when there is none or the binding is wrong.
PageRef RadixTree::adoptWindow(PageRef window, int32_t fullPage) {
    if (!window_ || !window.valid()) return {};
    if (window_->fullOf(window.page) != fullPage) {
        violation("window page " + std::to_string(window.page) + " is bound to full page " +
                  std::to_string(window_->fullOf(window.page)) + ", not " + std::to_string(fullPage) +
                  "; cached without window content");
        return {};
    }
    if (window_->pages().adoptIntoTree(window) != KvResult::Ok) return {};  // recorded by the pool
    return window;
}

int32_t RadixTree::addChild(int32_t parent, std::span<const int32_t> key, PageRef full, PageRef window) {
    if (full_.adoptIntoTree(full) != KvResult::Ok) return -1;  // recorded by the pool
    return newNode(parent, key, full, adoptWindow(window, full.page));
}

bool RadixTree::replacePages(int32_t node, PageRef full, PageRef window) {
    if (!alive(node) || nodes_[size_t(node)].lock != 0) return false;
    if (full_.adoptIntoTree(full) != KvResult::Ok) return false;  // recorded by the pool
    dropWindow(node);  // before its full page goes: a bound full page is never freed
    Node& n = nodes_[size_t(node)];
    bool freed = false;
    if (full_.releaseFromTree(n.full, &freed) == KvResult::Ok && !freed)
        violation("replaced the pages of unlocked node " + std::to_string(node) + " but its full page " +
                  std::to_string(n.full.page) + " is still referenced by a sequence");
    nodeOfFull_[size_t(n.full.page)] = -1;
    n.full = full;
    nodeOfFull_[size_t(full.page)] = node;
    n.window = adoptWindow(window, full.page);
    if (n.window.valid()) {
        nodeOfWindow_[size_t(n.window.page)] = node;
        windowHolders_.insert(lruKey(node));
    }
    return true;
}

void RadixTree::lockPath(int32_t node) {
    for (int32_t n = node; n > kRoot; n = nodes_[size_t(n)].parent) {
        Node& x = nodes_[size_t(n)];
        if (x.lock++ == 0) {
            --nUnlocked_;
            updateLeafSet(n);
        }
    }
}

void RadixTree::unlockPath(int32_t node) {
    for (int32_t n = node; n > kRoot; n = nodes_[size_t(n)].parent) {
        Node& x = nodes_[size_t(n)];
        if (x.lock <= 0) {
            violation("unlock of node " + std::to_string(n) + " whose lock is already " + std::to_string(x.lock));
            continue;
        }
        if (--x.lock == 0) {
            ++nUnlocked_;
            updateLeafSet(n);
        }
    }
}

void RadixTree::touchPath(int32_t node) {
    const uint64_t now = ++clock_;
    for (int32_t n = node; n > kRoot; n = nodes_[size_t(n)].parent) {
        Node& x = nodes_[size_t(n)];
        const LruKey old = lruKey(n);
        const bool inLeaves = evictableLeaves_.erase(old) > 0;
        const bool inWindow = windowHolders_.erase(old) > 0;
        x.lastUse = now;
        if (inLeaves) evictableLeaves_.insert(lruKey(n));
        if (inWindow) windowHolders_.insert(lruKey(n));
    }
}

void RadixTree::dropWindow(int32_t node) {
    Node& n = nodes_[size_t(node)];
    if (!n.window.valid()) return;
    windowHolders_.erase(lruKey(node));
    const PageRef w = n.window;
    n.window = {};
    nodeOfWindow_[size_t(w.page)] = -1;
    bool freed = false;
    if (window_->releaseFromTree(w, n.full.page, &freed) == KvResult::Ok && !freed)
        violation("tombstoned node " + std::to_string(node) + " but its window page " + std::to_string(w.page) +
                  " is still referenced by a sequence");
}

void RadixTree::removeLeaf(int32_t node) {
    Node& n = nodes_[size_t(node)];
    evictableLeaves_.erase(lruKey(node));
    dropWindow(node);
    bool freed = false;
    if (full_.releaseFromTree(n.full, &freed) == KvResult::Ok && !freed)
        violation("evicted node " + std::to_string(node) + " but its full page " + std::to_string(n.full.page) +
                  " is still referenced by a sequence");
    nodeOfFull_[size_t(n.full.page)] = -1;
    Node& parent = nodes_[size_t(n.parent)];
    parent.children.erase(std::find(parent.children.begin(), parent.children.end(), node));
    const int32_t p = n.parent;
    if (n.lock == 0) --nUnlocked_;
    n = Node{};
    freeSlots_.push_back(node);
    --nLive_;
    updateLeafSet(p);
}

int64_t RadixTree::evictFull(int64_t pages) {
    int64_t freed = 0;
    while (freed < pages && !evictableLeaves_.empty()) {
        const int32_t node = std::get<2>(*evictableLeaves_.begin());
        removeLeaf(node);
        ++freed;
    }
    return freed;
}

int64_t RadixTree::evictWindow(int64_t pages) {
    if (!window_) return 0;
    int64_t freed = 0;
    for (auto it = windowHolders_.begin(); it != windowHolders_.end() && freed < pages;) {
        const int32_t node = std::get<2>(*it);
        ++it;  // dropWindow erases the current entry
        if (window_->pages().refs(nodes_[size_t(node)].window.page) != 1) continue;
        dropWindow(node);
        ++freed;
    }
    return freed;
}

void RadixTree::fullPageMoved(int32_t from, PageRef to) {
    const int32_t node = nodeOfFull_[size_t(from)];
    if (node < 0) return;
    nodeOfFull_[size_t(from)] = -1;
    nodeOfFull_[size_t(to.page)] = node;
    nodes_[size_t(node)].full = to;
}

void RadixTree::windowPageMoved(int32_t from, PageRef to) {
    const int32_t node = nodeOfWindow_[size_t(from)];
    if (node < 0) return;
    nodeOfWindow_[size_t(from)] = -1;
    nodeOfWindow_[size_t(to.page)] = node;
    nodes_[size_t(node)].window = to;
}

void RadixTree::setFullCapacity(int32_t pages) { nodeOfFull_.resize(size_t(pages), -1); }
void RadixTree::setWindowCapacity(int32_t pages) { nodeOfWindow_.resize(size_t(pages), -1); }

void RadixTree::countReferences(std::vector<int32_t>& fullRefs, std::vector<uint8_t>& fullInTree,
                                std::vector<int32_t>& windowRefs, std::vector<uint8_t>& windowInTree) const {
    for (int32_t id = 1; id < int32_t(nodes_.size()); ++id) {
        const Node& n = nodes_[size_t(id)];
        if (!n.live) continue;
        if (n.full.page >= 0 && n.full.page < int32_t(fullRefs.size())) {
            ++fullRefs[size_t(n.full.page)];
            fullInTree[size_t(n.full.page)] = 1;
        }
        if (n.window.valid() && n.window.page < int32_t(windowRefs.size())) {
            ++windowRefs[size_t(n.window.page)];
            windowInTree[size_t(n.window.page)] = 1;
        }
    }
}

bool RadixTree::check(std::span<const int32_t> expectedLocks) const {
    bool ok = true;
    auto bad = [&](const std::string& what) {
        violation(what);
        ok = false;
    };
    int32_t live = 0, unlocked = 0, leaves = 0, holders = 0;
    for (int32_t id = 1; id < int32_t(nodes_.size()); ++id) {
        const Node& n = nodes_[size_t(id)];
        if (!n.live) continue;
        ++live;
        const std::string me = "node " + std::to_string(id);
        if (n.parent < 0 || n.parent >= int32_t(nodes_.size()) || !nodes_[size_t(n.parent)].live) {
            bad(me + " has a dead parent " + std::to_string(n.parent));
            continue;
        }
        const Node& p = nodes_[size_t(n.parent)];
        if (std::count(p.children.begin(), p.children.end(), id) != 1) bad(me + " is not listed once by its parent");
        if (n.depth != p.depth + 1) bad(me + " has depth " + std::to_string(n.depth));
        if (int32_t(n.key.size()) != P_) bad(me + " key is not one page");
        for (int32_t c : n.children)
            if (c != id && nodes_[size_t(c)].live && nodes_[size_t(c)].parent != id)
                bad(me + " lists child " + std::to_string(c) + " whose parent is elsewhere");
        for (size_t a = 0; a < n.children.size(); ++a)
            for (size_t b = a + 1; b < n.children.size(); ++b)
                if (nodes_[size_t(n.children[a])].key == nodes_[size_t(n.children[b])].key)
                    bad(me + " has two children with the same key");
        // Pages.
        if (!full_.live(n.full) || full_.state(n.full.page) != PageState::Cached)
            bad(me + " holds " + full_.describe(n.full.page) + " (handle gen " + std::to_string(n.full.gen) +
                ") which is not a live cached page");
        else if (nodeOfFull_[size_t(n.full.page)] != id)
            bad(me + ": page map of full page " + std::to_string(n.full.page) + " points elsewhere");
        if (n.window.valid()) {
            ++holders;
            if (!window_ || !window_->pages().live(n.window) ||
                window_->pages().state(n.window.page) != PageState::Cached)
                bad(me + " holds a window page that is not a live cached page");
            else {
                if (nodeOfWindow_[size_t(n.window.page)] != id)
                    bad(me + ": page map of window page " + std::to_string(n.window.page) + " points elsewhere");
                if (window_->fullOf(n.window.page) != n.full.page)
                    bad(me + ": window page " + std::to_string(n.window.page) + " bound to full page " +
                        std::to_string(window_->fullOf(n.window.page)) + ", node holds " +
                        std::to_string(n.full.page));
            }
            if (!windowHolders_.count(lruKey(id))) bad(me + " holds a window page but is not in the window LRU");
        } else if (windowHolders_.count(lruKey(id))) {
            bad(me + " is a tombstone but is in the window LRU");
        }
        // Locks.
        const int32_t want = id < int32_t(expectedLocks.size()) ? expectedLocks[size_t(id)] : 0;
        if (n.lock != want)
            bad(me + " lock " + std::to_string(n.lock) + " but " + std::to_string(want) + " sequences use it");
        if (n.lock < 0) bad(me + " has a negative lock");
        if (n.parent != kRoot && p.lock < n.lock) bad(me + " is locked more than its parent");
        unlocked += n.lock == 0;
        const bool leaf = n.lock == 0 && n.children.empty();
        leaves += leaf;
        if (leaf != (evictableLeaves_.count(lruKey(id)) > 0))
            bad(me + (leaf ? " is an evictable leaf missing from" : " is in") + " the eviction LRU");
    }
    if (live != nLive_) bad("live nodes " + std::to_string(live) + ", counter " + std::to_string(nLive_));
    if (unlocked != nUnlocked_)
        bad("unlocked nodes " + std::to_string(unlocked) + ", counter " + std::to_string(nUnlocked_));
    if (leaves != int32_t(evictableLeaves_.size()))
        bad("eviction LRU holds " + std::to_string(evictableLeaves_.size()) + " entries for " +
            std::to_string(leaves) + " evictable leaves");
    if (holders != int32_t(windowHolders_.size()))
        bad("window LRU holds " + std::to_string(windowHolders_.size()) + " entries for " + std::to_string(holders) +
            " nodes with window pages");
    for (int32_t pg = 0; pg < int32_t(nodeOfFull_.size()); ++pg) {
        const int32_t id = nodeOfFull_[size_t(pg)];
        if (id >= 0 && (!alive(id) || nodes_[size_t(id)].full.page != pg))
            bad("page map: full page " + std::to_string(pg) + " -> node " + std::to_string(id) + " which does not hold it");
    }
    for (int32_t pg = 0; pg < int32_t(nodeOfWindow_.size()); ++pg) {
        const int32_t id = nodeOfWindow_[size_t(pg)];
        if (id >= 0 && (!alive(id) || nodes_[size_t(id)].window.page != pg))
            bad("page map: window page " + std::to_string(pg) + " -> node " + std::to_string(id) +
                " which does not hold it");
    }
    return ok;
}

} // namespace weir::kv
