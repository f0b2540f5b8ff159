#include "engine/tokenizer/token_index.h"

#include <cstring>

namespace weir::tok {

uint64_t TokenIndex::hash(std::string_view s) {
    // FNV-1a over 8-byte words with a final mix: token texts are short.
    uint64_t h = 0xcbf29ce484222325ull ^ s.size();
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        uint64_t w;
        std::memcpy(&w, s.data() + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < s.size(); ++i) h = (h ^ static_cast<uint8_t>(s[i])) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

void TokenIndex::build(const std::vector<std::string>& texts) {
    texts_ = &texts;
    size_t capacity = 16;
    while (capacity < texts.size() * 2) capacity *= 2;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    for (size_t id = 0; id < texts.size(); ++id) {
        const uint64_t h = hash(texts[id]);
        for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (s.id < 0) {
                s = {uint32_t(h >> 32), int32_t(id)};
                break;
            }
            if (s.hash == uint32_t(h >> 32) && texts[s.id] == texts[id]) {
                s.id = int32_t(id);
                break;
            }
        }
    }
}

int32_t TokenIndex::find(std::string_view text) const {
    if (slots_.empty()) return -1;
    const uint64_t h = hash(text);
    for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
        const Slot& s = slots_[i];
        if (s.id < 0) return -1;
        if (s.hash == uint32_t(h >> 32) && (*texts_)[s.id] == text) return s.id;
    }
}

} // namespace weir::tok
