#pragma once
// Flat open-addressing map from a 64-bit key (a pair of token ids) to a
// small value, for the BPE merge table: one probe per adjacent pair.
// The all-ones key is reserved (marks empty slots).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace weir::tok {

template <typename Value>
class PairMap {
public:
    void reserve(size_t n) {
        size_t capacity = 16;
        while (capacity < n + n / 2) capacity *= 2;  // load factor at most 2/3
        slots_.assign(capacity, Slot{});
        mask_ = capacity - 1;
        size_ = 0;
    }
    // Keeps the first value stored for a key. Grows as needed.
    void emplace(uint64_t key, const Value& value) {
        if ((size_ + 1) * 3 > slots_.size() * 2) grow();
        insert(key, value);
    }
    const Value* find(uint64_t key) const {
        if (slots_.empty()) return nullptr;
        for (uint64_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (s.key == key) return &s.value;
            if (s.key == kEmpty) return nullptr;
        }
    }

private:
    static constexpr uint64_t kEmpty = ~uint64_t(0);  // not a valid pair of ids
    struct Slot {
        uint64_t key = kEmpty;
        Value value{};
    };
    static uint64_t mix(uint64_t k) {
        k ^= k >> 33;
        k *= 0xff51afd7ed558ccdull;
        k ^= k >> 33;
        return k;
    }
    void insert(uint64_t key, const Value& value) {
        for (uint64_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (s.key == kEmpty) {
                s = {key, value};
                ++size_;
                return;
            }
            if (s.key == key) return;
        }
    }
    void grow() {
        std::vector<Slot> old = std::move(slots_);
        reserve(old.empty() ? 8 : old.size());
        for (const Slot& s : old)
            if (s.key != kEmpty) insert(s.key, s.value);
    }
    std::vector<Slot> slots_;
    uint64_t mask_ = 0;
    size_t size_ = 0;
};

} // namespace weir::tok
