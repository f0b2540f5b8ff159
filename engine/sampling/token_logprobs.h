#pragma once
// Log probabilities for one generated position: the log-softmax of a row of
// logits, read for the chosen token and the most likely alternatives.
#include <cstdint>

#include "weir/types/token_logprobs.h"

namespace weir {

class Tokenizer;

// `logits` is the row as the model produced it (the scheduler copies it
// before the sampler applies penalties and bias). NaN and -inf logits are
// impossible tokens (-inf log probability, never among the alternatives).
// `top` is clamped to [0, kMaxTopLogprobs]; ties go to the lower id.
// `tokenizer` may be null: the bytes are then empty.
TokenLogprobs tokenLogprobs(const float* logits, int32_t nVocab, int32_t chosen, int32_t top,
                            const Tokenizer* tokenizer);

} // namespace weir
