#pragma once
// Roles that llama.cpp gives tokens by their text, on top of the types stored
// in the file: end-of-generation and fill-in-the-middle markers are made
// Control (user text can then never produce them), and the end-of-generation
// ones stop generation. We follow the same rules so that token ids and
// stopping agree with llama.cpp.
#include <vector>

#include "engine/tokenizer/token_index.h"
#include "engine/tokenizer/vocabulary.h"

namespace weir::tok {

// Updates `types` (one per token) and returns the end-of-generation ids found
// by name, sorted and unique.
// (llama.cpp forces only the first fill-in-the-middle marker of each kind
// it meets, in hash order; we force all of them.)
std::vector<TokenId> applyNamedTokenRoles(const TokenIndex& index, std::vector<TokenType>& types);

// User-defined tokens that stand for an image or audio (Gemma's
// <start_of_image>, [multimodal], ...): markers, not text, although the file
// types them like Gemma's HTML tags and whitespace runs, which are text.
// Hugging Face marks them special, so its decoding (and vLLM's) leaves them
// out unless asked. Sorted ids of those present.
std::vector<TokenId> findMediaMarkers(const TokenIndex& index, const std::vector<TokenType>& types);

} // namespace weir::tok
