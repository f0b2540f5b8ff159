#pragma once
// Renders a conversation into the prompt text the model was trained on, using
// the model's own tokenizer.chat_template from GGUF metadata.
#include <memory>
#include <string>
#include <vector>

namespace weir {

struct ChatMessage {
    std::string role;      // "system", "user", "assistant", "tool"
    std::string content;
};

class ChatTemplate {
public:
    virtual ~ChatTemplate() = default;
    // templateSource: the Jinja text of tokenizer.chat_template. bosText/eosText:
    // the strings of the bos/eos tokens (templates refer to them).
    static std::unique_ptr<ChatTemplate> create(const std::string& templateSource,
                                                const std::string& bosText,
                                                const std::string& eosText);
    // Full prompt text, including BOS when the template writes it, and the
    // assistant header when addGenerationPrompt. Throws weir::Error if the
    // template rejects the conversation (e.g. roles out of order).
    virtual std::string render(const std::vector<ChatMessage>& messages, bool addGenerationPrompt) const = 0;
    virtual std::string family() const = 0;  // "gemma", "llama3", "chatml", "jinja"
};

} // namespace weir
