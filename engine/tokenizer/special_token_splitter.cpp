#include "engine/tokenizer/special_token_splitter.h"

#include <algorithm>
#include <numeric>

namespace weir::tok {

void SpecialTokenSplitter::build(const std::vector<int32_t>& ids, const std::vector<std::string_view>& texts) {
    nodes_.assign(1, Node{});
    rootChildren_.assign(256, -1);
    edges_.clear();
    count_ = 0;

    // Longest first; equal lengths by id so the order is reproducible.
    std::vector<size_t> order(ids.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (texts[a].size() != texts[b].size()) return texts[a].size() > texts[b].size();
        return ids[a] < ids[b];
    });

    for (size_t rank = 0; rank < order.size(); ++rank) {
        const std::string_view text = texts[order[rank]];
        if (text.empty()) continue;
        int32_t node = 0;
        for (size_t i = 0; i < text.size(); ++i) {
            const auto byte = static_cast<uint8_t>(text[i]);
            int32_t next = child(node, byte);
            if (next < 0) {
                next = int32_t(nodes_.size());
                nodes_.push_back(Node{});
                if (node == 0) {
                    rootChildren_[byte] = next;
                } else {
                    edges_.emplace((uint64_t(node) << 8) | byte, next);
                }
            }
            node = next;
        }
        if (nodes_[node].token < 0) {  // a duplicate text keeps its first (higher-priority) token
            nodes_[node].token = ids[order[rank]];
            nodes_[node].priority = int32_t(rank);
            ++count_;
        }
    }
}

int32_t SpecialTokenSplitter::child(int32_t node, uint8_t byte) const {
    if (node == 0) return rootChildren_[byte];
    auto it = edges_.find((uint64_t(node) << 8) | byte);
    return it == edges_.end() ? -1 : it->second;
}

void SpecialTokenSplitter::split(std::string_view text, std::vector<Fragment>& out, const Allowed& allowed) const {
    struct Occurrence {
        int32_t priority;
        uint32_t pos, len;
        int32_t token;
    };
    std::vector<Occurrence> occ;
    if (count_ > 0) {
        for (size_t pos = 0; pos < text.size(); ++pos) {
            int32_t node = rootChildren_[static_cast<uint8_t>(text[pos])];
            size_t len = 1;
            while (node >= 0) {
                if (nodes_[node].token >= 0 && (!allowed || allowed(pos, pos + len, nodes_[node].token))) {
                    occ.push_back({nodes_[node].priority, uint32_t(pos), uint32_t(len), nodes_[node].token});
                }
                if (pos + len >= text.size()) break;
                node = child(node, static_cast<uint8_t>(text[pos + len]));
                ++len;
            }
        }
    }
    if (occ.empty()) {
        if (!text.empty()) out.push_back({0, text.size(), -1});
        return;
    }

    // Replay llama.cpp's order: token by token (longest first), each one's
    // occurrences left to right; an occurrence is taken if it does not overlap
    // anything taken before.
    std::sort(occ.begin(), occ.end(), [](const Occurrence& a, const Occurrence& b) {
        return a.priority != b.priority ? a.priority < b.priority : a.pos < b.pos;
    });
    std::vector<uint8_t> covered(text.size(), 0);
    std::vector<Occurrence> taken;
    for (const Occurrence& o : occ) {
        if (std::any_of(covered.begin() + o.pos, covered.begin() + o.pos + o.len, [](uint8_t c) { return c != 0; }))
            continue;
        std::fill(covered.begin() + o.pos, covered.begin() + o.pos + o.len, uint8_t(1));
        taken.push_back(o);
    }
    std::sort(taken.begin(), taken.end(), [](const Occurrence& a, const Occurrence& b) { return a.pos < b.pos; });
    size_t cursor = 0;
    for (const Occurrence& o : taken) {
        if (o.pos > cursor) out.push_back({cursor, o.pos, -1});
        out.push_back({o.pos, size_t(o.pos) + o.len, o.token});
        cursor = size_t(o.pos) + o.len;
    }
    if (cursor < text.size()) out.push_back({cursor, text.size(), -1});
}

} // namespace weir::tok
