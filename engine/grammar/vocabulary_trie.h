#pragma once
// The vocabulary as a byte trie, built once per model and shared by every
// constrained request: token masks are computed by walking it with a grammar
// state, so a prefix that breaks the grammar rules out every token under it
// at once.
//
// Nodes are stored in depth-first order in flat arrays, each with the index
// just past its subtree, so the walk is one forward pass that jumps over
// pruned subtrees.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weir::grammar {

class VocabularyTrie {
public:
    // tokenBytes[id]: what the token writes; "" for tokens a grammar never
    // allows (control tokens: their ids are still counted in vocabSize).
    explicit VocabularyTrie(const std::vector<std::string>& tokenBytes);

    int32_t vocabSize() const { return vocabSize_; }
    std::string_view bytes(int32_t token) const {
        return std::string_view(text_).substr(size_t(textBegin_[size_t(token)]),
                                              size_t(textBegin_[size_t(token) + 1] - textBegin_[size_t(token)]));
    }

    // Node 0 is the root (the empty prefix); nodes 1.. follow depth first.
    int32_t nodeCount() const { return int32_t(byte_.size()); }
    int32_t maxDepth() const { return maxDepth_; }
    uint8_t byte(int32_t node) const { return byte_[size_t(node)]; }
    uint16_t depth(int32_t node) const { return depth_[size_t(node)]; }
    int32_t subtreeEnd(int32_t node) const { return subtreeEnd_[size_t(node)]; }
    // Tokens whose bytes end exactly at this node.
    const int32_t* tokensBegin(int32_t node) const { return tokens_.data() + tokenBegin_[size_t(node)]; }
    const int32_t* tokensEnd(int32_t node) const { return tokens_.data() + tokenBegin_[size_t(node) + 1]; }

private:
    int32_t vocabSize_ = 0;
    std::string text_;
    std::vector<int64_t> textBegin_;
    std::vector<uint8_t> byte_;
    std::vector<uint16_t> depth_;
    std::vector<int32_t> subtreeEnd_;
    std::vector<int32_t> tokenBegin_;  // nodeCount + 1 offsets into tokens_
    std::vector<int32_t> tokens_;
    int32_t maxDepth_ = 0;
};

} // namespace weir::grammar
