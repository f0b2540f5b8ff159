#pragma once
// Byte ranges of a text that came from a conversation (message content, tool
// definitions and calls, anything a client wrote) rather than from the chat
// template or Weir itself. The tokenizer parses special tokens only outside
// them, so text a user writes can never become a control token.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace weir {

struct ByteRange {
    size_t begin = 0, end = 0;  // [begin, end)
    bool operator==(const ByteRange&) const = default;
};

// Sorted, non-empty, non-overlapping ranges; touching ranges are merged.
class UntrustedRanges {
public:
    UntrustedRanges() = default;
    static UntrustedRanges whole(size_t size);

    bool empty() const { return ranges_.empty(); }
    const std::vector<ByteRange>& ranges() const { return ranges_; }
    // Marks [begin, end) untrusted; ranges must be added in increasing order.
    void add(size_t begin, size_t end);
    // Appends `other` shifted by `offset` (the length of the text before it).
    void append(const UntrustedRanges& other, size_t offset);
    // The part within [begin, end), shifted to start at 0.
    UntrustedRanges slice(size_t begin, size_t end) const;
    // True when any byte of [begin, end) is untrusted.
    bool overlaps(size_t begin, size_t end) const;
    // True when every byte of [0, size) is untrusted.
    bool coversAll(size_t size) const;

    bool operator==(const UntrustedRanges&) const = default;

private:
    std::vector<ByteRange> ranges_;
};

// A text and which of its bytes are untrusted: a rendered prompt, or a part
// of one that Weir assembles around client text (tool calls and results).
struct MarkedText {
    std::string text;
    UntrustedRanges untrusted;

    void appendTrusted(std::string_view s) { text.append(s); }
    void appendUntrusted(std::string_view s) {
        untrusted.add(text.size(), text.size() + s.size());
        text.append(s);
    }
    void append(const MarkedText& other) {
        untrusted.append(other.untrusted, text.size());
        text.append(other.text);
    }
};

}  // namespace weir
