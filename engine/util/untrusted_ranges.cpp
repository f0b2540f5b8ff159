#include "engine/util/untrusted_ranges.h"

#include <algorithm>

namespace weir {

UntrustedRanges UntrustedRanges::whole(size_t size) {
    UntrustedRanges r;
    r.add(0, size);
    return r;
}

void UntrustedRanges::add(size_t begin, size_t end) {
    if (begin >= end) return;
    if (!ranges_.empty() && begin <= ranges_.back().end) {
        ranges_.back().end = std::max(ranges_.back().end, end);
        return;
    }
    ranges_.push_back({begin, end});
}

void UntrustedRanges::append(const UntrustedRanges& other, size_t offset) {
    for (const ByteRange& r : other.ranges_) add(r.begin + offset, r.end + offset);
}

UntrustedRanges UntrustedRanges::slice(size_t begin, size_t end) const {
    UntrustedRanges out;
    for (const ByteRange& r : ranges_) {
        const size_t b = std::max(r.begin, begin), e = std::min(r.end, end);
        if (b < e) out.add(b - begin, e - begin);
    }
    return out;
}

bool UntrustedRanges::overlaps(size_t begin, size_t end) const {
    // First range ending after `begin`; it overlaps when it starts before `end`.
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), begin,
                               [](size_t pos, const ByteRange& r) { return pos < r.end; });
    return it != ranges_.end() && it->begin < end && begin < end;
}

bool UntrustedRanges::coversAll(size_t size) const {
    if (size == 0) return true;
    return ranges_.size() == 1 && ranges_[0].begin == 0 && ranges_[0].end >= size;
}

}  // namespace weir
