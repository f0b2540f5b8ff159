#pragma once
// Text -> token id lookup, built once per vocabulary. Open addressing over a
// flat array of (hash, id): the merge loops probe it for every adjacent pair
// of pieces, so one probe should cost about one cache miss, which a
// node-based std::unordered_map of 262k strings does not manage.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weir::tok {

class TokenIndex {
public:
    // `texts` must outlive the index. When a text repeats, the last id wins.
    void build(const std::vector<std::string>& texts);
    int32_t find(std::string_view text) const;  // -1 if absent

private:
    static uint64_t hash(std::string_view s);
    struct Slot {
        uint32_t hash = 0;
        int32_t id = -1;
    };
    const std::vector<std::string>* texts_ = nullptr;
    std::vector<Slot> slots_;
    uint64_t mask_ = 0;
};

} // namespace weir::tok
