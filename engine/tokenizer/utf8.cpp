#include "engine/tokenizer/utf8.h"

namespace weir::tok {
namespace {

bool isContinuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// Strict check of the sequence starting at `pos`: returns its length when it
// is complete and valid, 0 when it is a valid but cut-off prefix that ends the
// buffer, and -k when it is invalid (k = bytes to replace by one U+FFFD: the
// "maximal subpart" rule of the Unicode standard, 3.9).
int strictSequence(std::string_view s, size_t pos) {
    const auto b0 = static_cast<uint8_t>(s[pos]);
    if (b0 < 0x80) return 1;
    int len;
    uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        len = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        len = 3;
        if (b0 == 0xE0) lo = 0xA0;       // no overlongs
        if (b0 == 0xED) hi = 0x9F;       // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        len = 4;
        if (b0 == 0xF0) lo = 0x90;       // no overlongs
        if (b0 == 0xF4) hi = 0x8F;       // nothing above U+10FFFF
    } else {
        return -1;
    }
    for (int i = 1; i < len; ++i) {
        if (pos + i >= s.size()) return 0;
        const auto b = static_cast<uint8_t>(s[pos + i]);
        const bool ok = i == 1 ? (b >= lo && b <= hi) : isContinuation(b);
        if (!ok) return -i;
    }
    return len;
}

} // namespace

uint32_t decodeUtf8(std::string_view s, size_t& pos) {
    const auto b0 = static_cast<uint8_t>(s[pos]);
    const size_t left = s.size() - pos;
    auto cont = [&](size_t i) { return i < left && isContinuation(static_cast<uint8_t>(s[pos + i])); };
    uint32_t cp;
    if (b0 < 0x80) {
        pos += 1;
        return b0;
    } else if ((b0 & 0xE0) == 0xC0 && cont(1)) {
        cp = (uint32_t(b0 & 0x1F) << 6) | (s[pos + 1] & 0x3F);
        pos += 2;
    } else if ((b0 & 0xF0) == 0xE0 && cont(1) && cont(2)) {
        cp = (uint32_t(b0 & 0x0F) << 12) | (uint32_t(s[pos + 1] & 0x3F) << 6) | (s[pos + 2] & 0x3F);
        pos += 3;
    } else if ((b0 & 0xF8) == 0xF0 && cont(1) && cont(2) && cont(3)) {
        cp = (uint32_t(b0 & 0x07) << 18) | (uint32_t(s[pos + 1] & 0x3F) << 12) |
             (uint32_t(s[pos + 2] & 0x3F) << 6) | (s[pos + 3] & 0x3F);
        pos += 4;
    } else {
        pos += 1;
        return 0xFFFD;
    }
    return cp > 0x10FFFF ? 0xFFFD : cp;
}

std::vector<uint32_t> decodeUtf8(std::string_view s) {
    std::vector<uint32_t> out;
    out.reserve(s.size());
    for (size_t pos = 0; pos < s.size();) out.push_back(decodeUtf8(s, pos));
    return out;
}

void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

size_t takeCompleteUtf8(std::string_view s, std::string& out) {
    size_t pos = 0;
    while (pos < s.size()) {
        const int r = strictSequence(s, pos);
        if (r == 0) break;
        if (r > 0) {
            out.append(s.substr(pos, size_t(r)));
            pos += size_t(r);
        } else {
            out += "\xEF\xBF\xBD";
            pos += size_t(-r);
        }
    }
    return pos;
}

std::string sanitizeUtf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    size_t pos = 0;
    while (pos < s.size()) {
        const int r = strictSequence(s, pos);
        if (r > 0) {
            out.append(s.substr(pos, size_t(r)));
            pos += size_t(r);
        } else {
            out += "\xEF\xBF\xBD";
            pos = r == 0 ? s.size() : pos + size_t(-r);
        }
    }
    return out;
}

} // namespace weir::tok
