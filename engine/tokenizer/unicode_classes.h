#pragma once
// Unicode character classes the BPE pre-tokenizer regexes ask about:
// \p{L}, \p{N}, \p{P} and \s. Tables are generated from Python's unicodedata
// (gen_unicode_tables.py); lookups are O(1) in the BMP.
#include <cstdint>

namespace weir::tok {

enum class CharClass : uint8_t { Other = 0, Letter = 1, Number = 2, Punctuation = 3 };

CharClass charClass(uint32_t cp);
// Unicode White_Space property (what \s matches in Python/Rust/PCRE regexes).
bool isWhitespace(uint32_t cp);

inline bool isLetter(uint32_t cp) { return charClass(cp) == CharClass::Letter; }
inline bool isNumber(uint32_t cp) { return charClass(cp) == CharClass::Number; }

} // namespace weir::tok
