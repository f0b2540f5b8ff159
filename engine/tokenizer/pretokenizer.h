#pragma once
// Byte-level BPE pre-tokenizers: split text into words before merging, as the
// models' tokenizer.json regexes do. Each regex is implemented by hand over
// code points (std::regex is slow and has no \p{..} classes), following the
// split llama.cpp makes so token ids agree with it.
#include <cstdint>
#include <string_view>
#include <vector>

namespace weir::tok {

enum class PreTokenizer {
    Gpt2,     // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    Llama3,   // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
    Qwen2,    // as Llama3 but \p{N} one digit at a time
    Default,  // llama.cpp's fallback chain: [\p{P}$+<=>^~|]+ , then Gpt2, then \p{N}+, then [0-9]{3}
    Starcoder,  // \p{N} (every digit alone), then Gpt2 inside each piece: StarCoder, SmolLM, Refact
};

// Maps tokenizer.ggml.pre to a pre-tokenizer; throws weir::Error for names we
// do not implement (better than silently producing different token ids).
PreTokenizer preTokenizerFromName(std::string_view name);

// Splits code points `cps` into words; appends each word's length in code points.
void preTokenize(PreTokenizer kind, const std::vector<uint32_t>& cps, std::vector<uint32_t>& wordLengths);

} // namespace weir::tok
