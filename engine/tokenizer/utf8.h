#pragma once
// Small UTF-8 helpers shared by the tokenizers and the detokenizer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weir::tok {

// Length of the sequence a lead byte announces, from its top four bits
// (1 for ASCII and for stray continuation bytes, so scanning always advances).
inline size_t utf8SequenceLength(uint8_t lead) {
    static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return kLen[lead >> 4];
}

// Decodes the code point at `pos` and advances past it. A malformed sequence
// yields U+FFFD and advances one byte (the same recovery llama.cpp uses, so
// pre-tokenization of broken input matches it).
uint32_t decodeUtf8(std::string_view s, size_t& pos);
std::vector<uint32_t> decodeUtf8(std::string_view s);
void appendUtf8(std::string& out, uint32_t cp);

// For a stream that may continue after `s`: appends to `out` every character
// whose bytes are all there, and U+FFFD for each invalid sequence (which no
// later byte can repair); stops before a valid sequence cut off at the end.
// Returns the number of bytes of `s` consumed.
size_t takeCompleteUtf8(std::string_view s, std::string& out);

// Replaces every invalid byte sequence with U+FFFD (strict: no overlongs,
// surrogates or values above U+10FFFF).
std::string sanitizeUtf8(std::string_view s);

} // namespace weir::tok
