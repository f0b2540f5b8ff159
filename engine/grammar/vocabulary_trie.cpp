// VocabularyTrie: built from the tokens sorted by their bytes, so each token
// adds the nodes past its common prefix with the previous one.
#include "engine/grammar/vocabulary_trie.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "weir/base/error.h"

namespace weir::grammar {

VocabularyTrie::VocabularyTrie(const std::vector<std::string>& tokenBytes) {
    vocabSize_ = int32_t(tokenBytes.size());
    textBegin_.reserve(tokenBytes.size() + 1);
    for (const std::string& b : tokenBytes) {
        textBegin_.push_back(int64_t(text_.size()));
        text_ += b;
    }
    textBegin_.push_back(int64_t(text_.size()));

    std::vector<int32_t> order;
    for (int32_t id = 0; id < vocabSize_; ++id)
        if (!tokenBytes[size_t(id)].empty()) order.push_back(id);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return tokenBytes[size_t(a)] < tokenBytes[size_t(b)]; });

    // Root.
    byte_.push_back(0);
    depth_.push_back(0);
    subtreeEnd_.push_back(0);
    std::vector<std::vector<int32_t>> nodeTokens(1);
    std::vector<int32_t> path = {0};  // path[d] = node at depth d on the current branch
    std::string_view previous;
    auto closeTo = [&](size_t depth) {
        while (path.size() > depth + 1) {
            subtreeEnd_[size_t(path.back())] = int32_t(byte_.size());
            path.pop_back();
        }
    };
    for (int32_t id : order) {
        const std::string& s = tokenBytes[size_t(id)];
        if (s.size() > std::numeric_limits<uint16_t>::max())
            throw Error("token " + std::to_string(id) + " is longer than 65535 bytes");
        size_t common = 0;
        while (common < s.size() && common < previous.size() && s[common] == previous[common]) ++common;
        closeTo(common);
        for (size_t d = common; d < s.size(); ++d) {
            path.push_back(int32_t(byte_.size()));
            byte_.push_back(uint8_t(s[d]));
            depth_.push_back(uint16_t(d + 1));
            subtreeEnd_.push_back(0);
            nodeTokens.emplace_back();
        }
        nodeTokens[size_t(path.back())].push_back(id);
        maxDepth_ = std::max(maxDepth_, int32_t(s.size()));
        previous = s;
    }
    closeTo(0);
    subtreeEnd_[0] = int32_t(byte_.size());

    tokenBegin_.reserve(byte_.size() + 1);
    for (const auto& t : nodeTokens) {
        tokenBegin_.push_back(int32_t(tokens_.size()));
        tokens_.insert(tokens_.end(), t.begin(), t.end());
    }
    tokenBegin_.push_back(int32_t(tokens_.size()));
}

} // namespace weir::grammar
