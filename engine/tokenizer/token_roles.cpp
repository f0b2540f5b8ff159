#include "engine/tokenizer/token_roles.h"

#include <algorithm>
#include <string_view>

namespace weir::tok {
namespace {

// End of a turn or of the text, per model family.
constexpr std::string_view kEndOfGeneration[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>",  // DeepSeek
    "[e~[",
};
// Fill-in-the-middle markers: Control too; pad, repo and file separators
// also end generation.
constexpr std::string_view kFimMarkers[] = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>", "<PRE>",
    "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>",
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>", "<SUF>",
    "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>",
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>", "<MID>",
    "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>",
};
constexpr std::string_view kFimEndOfGeneration[] = {
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
    "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>",
    "<|file_sep|>",
};

// Media placeholders written as user-defined tokens (Gemma 3, Gemma 3n).
constexpr std::string_view kMediaMarkers[] = {
    "<start_of_image>", "<end_of_image>", "<image_soft_token>", "[multimodal]",
    "<start_of_audio>", "<end_of_audio>", "<audio_soft_token>",
};

} // namespace

std::vector<TokenId> findMediaMarkers(const TokenIndex& index, const std::vector<TokenType>& types) {
    std::vector<TokenId> out;
    for (std::string_view name : kMediaMarkers) {
        const TokenId id = index.find(name);
        if (id >= 0 && types[size_t(id)] == TokenType::UserDefined) out.push_back(id);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<TokenId> applyNamedTokenRoles(const TokenIndex& index, std::vector<TokenType>& types) {
    std::vector<TokenId> eog;
    auto mark = [&](const auto& names, bool endsGeneration) {
        for (std::string_view name : names) {
            const TokenId id = index.find(name);
            if (id < 0) continue;
            types[id] = TokenType::Control;
            if (endsGeneration) eog.push_back(id);
        }
    };
    mark(kFimMarkers, false);
    mark(kFimEndOfGeneration, true);
    mark(kEndOfGeneration, true);

    auto has = [&](std::string_view name) { return index.find(name) >= 0; };
    auto drop = [&](std::string_view name, TokenType newType) {
        const TokenId id = index.find(name);
        if (id < 0) return;
        eog.erase(std::remove(eog.begin(), eog.end(), id), eog.end());
        types[id] = newType;
    };
    // gpt-oss / solar-open: "<|end|>" ends a message, not the generation.
    if (has("<|end|>") && ((has("<|return|>") && has("<|call|>")) || (has("<|calls|>") && has("<|flush|>"))))
        drop("<|end|>", TokenType::UserDefined);
    // Gemma 4 and PLaMo use "</s>" as a plain token.
    if (has("</s>") && (has("<|tool_response>") || has("<|plamo:eos|>")))
        drop("</s>", TokenType::Normal);

    std::sort(eog.begin(), eog.end());
    eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
    return eog;
}

} // namespace weir::tok
