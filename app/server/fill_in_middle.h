#pragma once
// Completions' `suffix` (fill in the middle): a model trained for it has FIM
// control tokens in its vocabulary, and the prompt is laid out as
// prefix-suffix-middle with them: <|fim_prefix|>PREFIX<|fim_suffix|>SUFFIX
// <|fim_middle|> (Qwen, DeepSeek, CodeGemma) or the same with <fim_prefix>,
// <fim_suffix>, <fim_middle> (StarCoder, SantaCoder). A model without them
// cannot do it, and the request is refused rather than answered as if the
// suffix were not there.
#include <optional>
#include <string>

#include "weir/engine.h"

namespace weir::server {

// The FIM prompt (raw text, for Engine::tokenizePrompt), or nullopt when the
// model's vocabulary has no FIM tokens.
std::optional<std::string> fillInMiddlePrompt(const Engine& engine, const std::string& prefix, const std::string& suffix);

} // namespace weir::server
