#pragma once
// Finds special tokens (control, user-defined, unknown) written in the text
// and cuts the text around them, before the merge algorithm sees it.
// Semantics follow llama.cpp: tokens are taken longest first; each one takes
// its non-overlapping occurrences left to right in what earlier (longer)
// tokens left as text. A trie finds every occurrence in one pass, so the cost
// does not grow with the number of special tokens (Gemma has ~6400).
#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace weir::tok {

struct Fragment {
    size_t begin = 0, end = 0;  // byte range in the text (text fragments)
    int32_t token = -1;         // >= 0: a special token, the range is where it was written
};

class SpecialTokenSplitter {
public:
    // `ids`/`texts`: the tokens to look for (empty texts are ignored).
    void build(const std::vector<int32_t>& ids, const std::vector<std::string_view>& texts);
    bool empty() const { return count_ == 0; }
    // Cuts `text` into text fragments and special-token fragments, in order.
    // `allowed`, when given, decides for each place a token is written
    // (begin, end, token) whether it may be taken there; refused places stay
    // text and do not block other tokens.
    using Allowed = std::function<bool(size_t begin, size_t end, int32_t token)>;
    void split(std::string_view text, std::vector<Fragment>& out, const Allowed& allowed = {}) const;

private:
    struct Node {
        int32_t token = -1;     // token ending here, if any
        int32_t priority = -1;  // its rank in longest-first order
    };
    int32_t child(int32_t node, uint8_t byte) const;

    std::vector<Node> nodes_;
    std::vector<int32_t> rootChildren_;                   // fast first step
    std::unordered_map<uint64_t, int32_t> edges_;          // (node << 8 | byte) -> node
    size_t count_ = 0;
};

} // namespace weir::tok
