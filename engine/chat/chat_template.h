#pragma once
// Renders a conversation into the prompt text the model was trained on, using
// the model's own tokenizer.chat_template from GGUF metadata (a Jinja
// template, run by the interpreter in jinja_template.h exactly as python
// jinja2 would run it). When a GGUF carries no template, a built-in one for
// the model's format (Gemma, Llama 3, ChatML) is used instead; family() and
// isBuiltin() say which.
//
// BOS: templates write bos_token themselves. Tokenize the rendered text with
// addBos = addBosWhenTokenizing(text, tokenizer.addBosDefault()), so the
// prompt carries exactly one BOS.
// Stopping: generation ends at the tokenizer's end-of-generation tokens;
// endOfTurnStrings() adds the turn terminators of this format as stop strings.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/chat/jinja_value.h"

namespace weir {

struct ChatMessage {
    std::string role;      // "system", "user", "assistant", "tool"
    std::string content;
    // Further fields of the message as the template sees them, as a dict, or
    // undefined for none: "tool_calls" (a list of {"id", "type": "function",
    // "function": {"name", "arguments"}}), "tool_call_id", "name",
    // "reasoning_content"; a "content" entry here (e.g. a list of parts)
    // replaces the string content.
    jinja::Value fields;
};

struct ChatRenderOptions {
    bool addGenerationPrompt = true;
    // Tool definitions (a list of {"type": "function", "function": {...}}), or
    // undefined for none: then the template sees no `tools` variable at all.
    jinja::Value tools;
    // Extra template variables as a dict (enable_thinking, date_string,
    // tools_in_user_message, builtin_tools, ...), or undefined.
    jinja::Value variables;
    // Tool-call arguments given as JSON text (as the OpenAI API sends them)
    // are parsed into objects, the form templates expect.
    bool parseToolCallArguments = true;
    // Seconds since the epoch for strftime_now(), formatted in UTC; the
    // current local time when absent.
    std::optional<int64_t> now;
};

// What the loader knows about a model, to pick a built-in template when the
// GGUF has no tokenizer.chat_template.
struct ChatModelInfo {
    std::string chatTemplate;                // tokenizer.chat_template; empty when absent
    std::string architecture;                // general.architecture ("gemma3", "llama", "qwen2", ...)
    std::string bosText, eosText;            // texts of the bos and eos tokens
    std::vector<std::string> specialTokens;  // texts of the vocabulary's control tokens
};

class ChatTemplate {
public:
    virtual ~ChatTemplate() = default;
    // templateSource: the Jinja text of tokenizer.chat_template. bosText/eosText:
    // the strings of the bos/eos tokens (templates refer to them).
    // Throws weir::Error if the template does not parse.
    static std::unique_ptr<ChatTemplate> create(const std::string& templateSource,
                                                const std::string& bosText,
                                                const std::string& eosText);
    // The model's own template, or the built-in one matching its format
    // (Gemma when it has <start_of_turn>, Llama 3 for <|start_header_id|>,
    // ChatML for <|im_start|>, ChatML when nothing matches) when the GGUF has
    // none or one this interpreter cannot parse; description() says why.
    static std::unique_ptr<ChatTemplate> forModel(const ChatModelInfo& info);
    // A built-in template by family name: "gemma", "llama3" or "chatml";
    // throws weir::Error for any other name.
    static std::unique_ptr<ChatTemplate> builtin(const std::string& family, const std::string& bosText,
                                                 const std::string& eosText);
    // The Jinja text of a built-in template ("" for an unknown family).
    static const char* builtinSource(const std::string& family);

    // Full prompt text, including BOS when the template writes it, and the
    // assistant header when addGenerationPrompt. Throws weir::Error if the
    // template rejects the conversation (e.g. roles out of order); an error
    // the template raised itself is a jinja::TemplateRaised.
    virtual std::string render(const std::vector<ChatMessage>& messages, bool addGenerationPrompt) const = 0;
    virtual std::string render(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options) const = 0;
    // The same with messages already as a list of dicts (e.g. parsed from an
    // OpenAI request with jinja::Value::parseJson).
    virtual std::string renderValues(const jinja::Value& messages, const ChatRenderOptions& options) const = 0;
    // The prompt to tokenize: the same text with every byte that came from
    // the messages, tools or variables marked untrusted (strings that carry
    // provenance already, see jinja::Value::text, keep theirs), so that
    // special tokens are parsed only in what the template itself wrote.
    virtual MarkedText renderMarked(const jinja::Value& messages, const ChatRenderOptions& options) const = 0;
    MarkedText renderMarked(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options) const;

    virtual std::string family() const = 0;  // "gemma", "llama3", "chatml", "jinja"
    // True when a built-in template stands in for one the GGUF lacks.
    virtual bool isBuiltin() const = 0;
    // One line for logs and `weir-cli inspect`, e.g. "gemma (built-in: the
    // GGUF has no tokenizer.chat_template)".
    virtual std::string description() const = 0;
    virtual const std::string& source() const = 0;
    virtual const std::string& bosText() const = 0;
    virtual const std::string& eosText() const = 0;
    // Texts that end an assistant turn in this format ("<end_of_turn>",
    // "<|eot_id|>", "<|im_end|>", ...): use them as stop strings alongside the
    // tokenizer's end-of-generation tokens.
    virtual std::vector<std::string> endOfTurnStrings() const = 0;
    // True when the template writes BOS at the start of its output.
    virtual bool rendersBos() const = 0;

    // Whether the tokenizer should still add BOS to this rendered text: only
    // when it wants one and the text does not already start with it.
    bool addBosWhenTokenizing(std::string_view renderedText, bool tokenizerAddsBos) const;
};

}  // namespace weir
