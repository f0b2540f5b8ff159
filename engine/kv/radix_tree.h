#pragma once
// The prefix tree over full-pool pages. Every edge is one page of P token ids,
// every node owns one reference to one full page (the KV of those P tokens
// after that exact prefix) and, unless it is a tombstone, one reference to the
// window page bound to it.
//
// Locks: a sequence locks the path from the root to the deepest node it uses
// (attached or inserted); lock(parent) >= lock(child). A node with lock 0 is
// unreferenced by sequences, and so is its whole subtree: such nodes are the
// evictable full pages, removed leaf first in LRU order.
// Window content is evicted on its own (tombstoning: the window page goes,
// the full page stays) in LRU order, for any node whose window page nobody
// but the tree references.
//
// Window-reuse rule: a match of j pages is usable only if the last W-1 tokens
// before j*P all still have window pages; otherwise the match is shortened to
// the longest usable j, and the difference is reported as tokens the window
// layers must recompute.
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "engine/kv/page_pool.h"
#include "engine/kv/window_pool.h"

namespace weir::kv {

class RadixTree {
public:
    static constexpr int32_t kRoot = 0;

    // `window` may be null (model without sliding layers); W = 0 then.
    RadixTree(int32_t pageSize, int32_t windowTokens, PagePool& full, WindowPool* window, IntegrityLog* log);

    struct Match {
        std::vector<int32_t> nodes;     // path, nodes[i] holds page i
        int64_t cachedTokens = 0;       // nodes.size() * P
        int64_t reuseTokens = 0;        // usable under the window-reuse rule
    };
    // Longest cached prefix of tokens[0, n-1) in whole pages (the last token
    // is never matched). Does not touch LRU order.
    Match match(std::span<const int32_t> tokens) const;

    // The child of `node` whose key is `key` (one page of tokens), or -1.
    int32_t child(int32_t node, std::span<const int32_t> key) const { return findChild(node, key); }
    // A new child of `parent` for `key`, taking a tree reference to `full`
    // and to `window` when it is valid and bound to `full` (else the node is
    // a tombstone). Returns -1 when the pool refuses the full page.
    int32_t addChild(int32_t parent, std::span<const int32_t> key, PageRef full, PageRef window);
    // Gives an unlocked node other pages for the same tokens (the same KV,
    // computed again): the tree's references to its old pages go (nobody
    // else holds them, since nothing locks the node, so they are freed) and
    // it takes references to `full` and `window` as addChild does. Refused
    // (false, nothing changed) for a locked node.
    bool replacePages(int32_t node, PageRef full, PageRef window);

    // Locks / unlocks every node from `node` up to (not including) the root.
    void lockPath(int32_t node);
    void unlockPath(int32_t node);
    // Marks the path as used now (LRU).
    void touchPath(int32_t node);

    // Evicts up to `pages` lock-0 leaves, least recently used first (frees
    // their full and window pages). Returns pages of the full pool freed.
    int64_t evictFull(int64_t pages);
    // Tombstones up to `pages` nodes whose window page only the tree holds,
    // least recently used first. Returns window pages freed.
    int64_t evictWindow(int64_t pages);
    int64_t evictableFullCount() const { return nUnlocked_; }

    int32_t nodeCount() const { return nLive_; }
    int32_t parent(int32_t node) const { return nodes_[size_t(node)].parent; }
    int32_t depth(int32_t node) const { return nodes_[size_t(node)].depth; }
    int32_t lock(int32_t node) const { return nodes_[size_t(node)].lock; }
    PageRef fullPage(int32_t node) const { return nodes_[size_t(node)].full; }
    PageRef windowPage(int32_t node) const { return nodes_[size_t(node)].window; }
    bool alive(int32_t node) const;
    // The node holding a full page, or -1.
    int32_t nodeOfFull(int32_t page) const {
        return page >= 0 && page < int32_t(nodeOfFull_.size()) ? nodeOfFull_[size_t(page)] : -1;
    }

    // Page moves during a resize: the node holding `from` now holds `to`.
    void fullPageMoved(int32_t from, PageRef to);
    void windowPageMoved(int32_t from, PageRef to);
    void setFullCapacity(int32_t pages);
    void setWindowCapacity(int32_t pages);

    // Adds the tree's references to per-page counts (for the pools' recount).
    void countReferences(std::vector<int32_t>& fullRefs, std::vector<uint8_t>& fullInTree,
                         std::vector<int32_t>& windowRefs, std::vector<uint8_t>& windowInTree) const;
    // Structure, locks (against `expectedLocks`, indexed by node id), LRU sets,
    // counters, page maps, window bindings of every node. Records violations.
    bool check(std::span<const int32_t> expectedLocks) const;
    int32_t nodeSlots() const { return int32_t(nodes_.size()); }

private:
    struct Node {
        int32_t parent = -1;
        int32_t depth = 0;                  // pages from the root (root 0)
        std::vector<int32_t> key;           // P tokens (empty for the root)
        std::vector<int32_t> children;
        PageRef full, window;
        int32_t lock = 0;
        uint64_t lastUse = 0, serial = 0;   // LRU order, ties by creation
        bool live = false;
    };
    using LruKey = std::tuple<uint64_t, uint64_t, int32_t>;  // lastUse, serial, node

    int32_t findChild(int32_t node, std::span<const int32_t> key) const;
    int32_t newNode(int32_t parent, std::span<const int32_t> key, PageRef full, PageRef window);
    void removeLeaf(int32_t node);
    void dropWindow(int32_t node);
    PageRef adoptWindow(PageRef window, int32_t fullPage);
    void updateLeafSet(int32_t node);
    LruKey lruKey(int32_t node) const;
    void violation(const std::string& what) const;

    int32_t P_, W_;
    PagePool& full_;
    WindowPool* window_;
    IntegrityLog* log_;
    std::vector<Node> nodes_;
    std::vector<int32_t> freeSlots_;
    std::vector<int32_t> nodeOfFull_, nodeOfWindow_;  // page -> node or -1
    std::set<LruKey> evictableLeaves_;  // lock 0, no children
    std::set<LruKey> windowHolders_;    // nodes with a window page
    int32_t nLive_ = 0, nUnlocked_ = 0;
    uint64_t clock_ = 0, serial_ = 0;
};

} // namespace weir::kv
