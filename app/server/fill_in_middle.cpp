#include "app/server/fill_in_middle.h"

namespace weir::server {

namespace {

// True when `marker` is one control token of the vocabulary: parsed as a
// special token it is one id, while as plain text it is not that id.
bool isControlToken(const Engine& engine, const std::string& marker) {
    const size_t bos = engine.tokenizePrompt(std::string()).size();
    const std::vector<int32_t> special = engine.tokenizePrompt(marker);
    if (special.size() != bos + 1) return false;
    const std::vector<int32_t> plain = engine.tokenize(marker, false);
    return !(plain.size() == 1 && plain[0] == special.back());
}

struct FimTokens {
    const char* prefix;
    const char* suffix;
    const char* middle;
};

constexpr FimTokens kConventions[] = {
    {"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"},
    {"<fim_prefix>", "<fim_suffix>", "<fim_middle>"},
};

} // namespace

std::optional<std::string> fillInMiddlePrompt(const Engine& engine, const std::string& prefix,
                                              const std::string& suffix) {
    for (const FimTokens& t : kConventions)
        if (isControlToken(engine, t.prefix) && isControlToken(engine, t.suffix) && isControlToken(engine, t.middle))
            return std::string(t.prefix) + prefix + t.suffix + suffix + t.middle;
    return std::nullopt;
}

} // namespace weir::server
