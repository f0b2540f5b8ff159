#include "engine/tokenizer/unicode_classes.h"

#include <algorithm>
#include <array>
#include <vector>

namespace weir::tok {
namespace {

struct ClassRange {
    uint32_t first, last;
    uint8_t cls;
};

constexpr ClassRange kRanges[] = {
#include "engine/tokenizer/unicode_class_ranges.inc"
};

// One byte per BMP code point, filled once from the ranges: the pre-tokenizer
// asks for every character of the prompt, so this must be a plain load.
const std::vector<uint8_t>& bmpTable() {
    static const std::vector<uint8_t> table = [] {
        std::vector<uint8_t> t(0x10000, 0);
        for (const ClassRange& r : kRanges) {
            if (r.first > 0xFFFF) break;
            for (uint32_t cp = r.first; cp <= std::min<uint32_t>(r.last, 0xFFFF); ++cp) t[cp] = r.cls;
        }
        return t;
    }();
    return table;
}

} // namespace

CharClass charClass(uint32_t cp) {
    if (cp < 0x10000) return static_cast<CharClass>(bmpTable()[cp]);
    auto it = std::upper_bound(std::begin(kRanges), std::end(kRanges), cp,
                               [](uint32_t c, const ClassRange& r) { return c < r.first; });
    if (it == std::begin(kRanges)) return CharClass::Other;
    --it;
    return cp <= it->last ? static_cast<CharClass>(it->cls) : CharClass::Other;
}

bool isWhitespace(uint32_t cp) {
    // White_Space from the Unicode Character Database (PropList.txt); this list
    // has been stable for many Unicode versions.
    switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
        return true;
    default:
        return cp >= 0x2000 && cp <= 0x200A;
    }
}

} // namespace weir::tok
