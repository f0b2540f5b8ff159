#pragma once
// Text <-> token ids from the vocabulary stored in GGUF metadata.
// Two algorithms: SentencePiece-style score merges with byte fallback
// (tokenizer.ggml.model = "llama": Gemma, Llama 2) and byte-level BPE with
// merges and a pre-tokenizer regex (tokenizer.ggml.model = "gpt2": Llama 3, Qwen).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/vocabulary.h"
#include "engine/util/untrusted_ranges.h"

namespace weir {

class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    // Builds the tokenizer the file describes; throws weir::Error if the
    // vocabulary is missing or of a kind we do not support.
    static std::unique_ptr<Tokenizer> fromGguf(const gguf::GgufFile& file);
    // Same from plain data (tests, tools); throws weir::Error if it is inconsistent.
    static std::unique_ptr<Tokenizer> fromVocabulary(Vocabulary vocab);

    // parseSpecial = false for user text: control tokens written in the text
    // are tokenized as plain text, never as the control token (user-defined
    // tokens such as Gemma's whitespace runs still match, as in llama.cpp).
    // addBos: add the special tokens the vocabulary asks for
    // (tokenizer.ggml.add_bos_token, add_eos_token); false adds none.
    // Safe to call from several threads at once (no shared scratch state).
    virtual std::vector<TokenId> encode(std::string_view text, bool addBos, bool parseSpecial) const = 0;
    // A rendered chat prompt: special tokens are parsed only where the text is
    // trusted (what the template wrote); untrusted bytes (what the
    // conversation wrote) are tokenized as with parseSpecial = false. The
    // text is not cut at the boundaries, so a prompt without control-token
    // text in its messages gives the same ids as encode(text, addBos, true).
    virtual std::vector<TokenId> encodeMarked(const MarkedText& prompt, bool addBos) const = 0;

    // Raw bytes of one token as it appears in output ("▁" -> " ", <0xNN> -> byte).
    // Control tokens and user-defined media markers (token_roles.h) give ""
    // unless showSpecial.
    virtual std::string tokenBytes(TokenId id, bool showSpecial = false) const = 0;
    // Concatenated tokenBytes. With add_space_prefix vocabularies the space
    // the tokenizer put in front of the text is removed again, so
    // decode(encode(x)) == x.
    std::string decode(const std::vector<TokenId>& ids, bool showSpecial = false) const;

    virtual int32_t vocabSize() const = 0;
    virtual const std::string& tokenText(TokenId id) const = 0;  // as stored in the vocab
    virtual TokenId find(std::string_view tokenText) const = 0;  // -1 if absent

    TokenId bos() const { return bos_; }
    TokenId eos() const { return eos_; }
    bool addBosDefault() const { return addBos_; }
    // End-of-generation tokens: eos plus <end_of_turn>, <|eot_id|>, <|im_end|> ... when present.
    const std::vector<TokenId>& endOfGeneration() const { return eog_; }
    bool isEndOfGeneration(TokenId id) const;
    // Control or unknown tokens: never shown to users (tokenBytes gives "").
    virtual bool isControl(TokenId id) const = 0;

protected:
    TokenId bos_ = -1, eos_ = -1;
    bool addBos_ = false;
    bool stripLeadingSpace_ = false;  // add_space_prefix: decode() drops the first space
    std::vector<TokenId> eog_;  // sorted
};

// Turns a stream of tokens into text without ever emitting half a UTF-8
// character: bytes of an incomplete sequence wait for the next token. Bytes
// that can never become a valid character are emitted as U+FFFD as soon as
// that is certain; an incomplete sequence left at flush() becomes U+FFFD.
class StreamingDetokenizer {
public:
    explicit StreamingDetokenizer(const Tokenizer& tok, bool showSpecial = false)
        : tok_(tok), showSpecial_(showSpecial) {}
    std::string push(TokenId id);  // complete characters now available
    std::string flush();           // whatever is left (invalid bytes as U+FFFD)
private:
    const Tokenizer& tok_;
    bool showSpecial_;
    std::string pending_;
};

} // namespace weir
