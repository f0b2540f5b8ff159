#include "engine/tokenizer/tokenizer.h"

#include "engine/tokenizer/bpe_tokenizer.h"
#include "engine/tokenizer/spm_tokenizer.h"
#include "engine/tokenizer/utf8.h"
#include "weir/base/error.h"

#include <algorithm>

namespace weir {

std::unique_ptr<Tokenizer> Tokenizer::fromGguf(const gguf::GgufFile& file) {
    return fromVocabulary(Vocabulary::fromGguf(file));
}

std::unique_ptr<Tokenizer> Tokenizer::fromVocabulary(Vocabulary vocab) {
    if (vocab.model == "llama") return std::make_unique<tok::SpmTokenizer>(std::move(vocab));
    if (vocab.model == "gpt2") return std::make_unique<tok::BpeTokenizer>(std::move(vocab));
    throw Error("tokenizer: unsupported tokenizer model '" + vocab.model + "' (supported: llama, gpt2)");
}

std::string Tokenizer::decode(const std::vector<TokenId>& ids, bool showSpecial) const {
    std::string out;
    bool strip = stripLeadingSpace_;
    for (TokenId id : ids) {
        std::string piece = tokenBytes(id, showSpecial);
        if (strip && !isControl(id) && !piece.empty()) {
            if (piece[0] == ' ') piece.erase(0, 1);
            strip = false;
        }
        out += piece;
    }
    return out;
}

bool Tokenizer::isEndOfGeneration(TokenId id) const {
    return std::binary_search(eog_.begin(), eog_.end(), id);
}

std::string StreamingDetokenizer::push(TokenId id) {
    pending_ += tok_.tokenBytes(id, showSpecial_);
    std::string out;
    pending_.erase(0, tok::takeCompleteUtf8(pending_, out));
    return out;
}

std::string StreamingDetokenizer::flush() {
    std::string out = tok::sanitizeUtf8(pending_);
    pending_.clear();
    return out;
}

} // namespace weir
