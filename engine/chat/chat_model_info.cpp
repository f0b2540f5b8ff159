#include "engine/chat/chat_model_info.h"

#include "weir/base/error.h"

namespace weir {

namespace {
// tokenizer.ggml.token_type values (llama.cpp): 3 = control, 4 = user defined.
constexpr int64_t kTokenControl = 3;
constexpr int64_t kTokenUserDefined = 4;
}  // namespace

ChatModelInfo chatModelInfoFromGguf(const gguf::GgufFile& file) {
    ChatModelInfo info;
    info.chatTemplate = file.getString("tokenizer.chat_template").value_or("");
    info.architecture = file.getString("general.architecture").value_or("");
    auto tokens = file.getStringArray("tokenizer.ggml.tokens");
    if (!tokens) return info;
    auto textOf = [&](const char* key) -> std::string {
        auto id = file.getInt(key);
        if (!id) return {};
        if (*id < 0 || *id >= static_cast<int64_t>(tokens->size()))
            throw Error(std::string(key) + " = " + std::to_string(*id) + " is outside the vocabulary of " +
                        std::to_string(tokens->size()) + " tokens");
        return (*tokens)[static_cast<size_t>(*id)];
    };
    info.bosText = textOf("tokenizer.ggml.bos_token_id");
    info.eosText = textOf("tokenizer.ggml.eos_token_id");
    if (auto types = file.getIntArray("tokenizer.ggml.token_type")) {
        size_t n = std::min(types->size(), tokens->size());
        for (size_t i = 0; i < n; ++i)
            if ((*types)[i] == kTokenControl || (*types)[i] == kTokenUserDefined)
                info.specialTokens.push_back((*tokens)[i]);
    }
    return info;
}

}  // namespace weir
