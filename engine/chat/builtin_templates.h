#pragma once
// Weir's own chat templates for models whose GGUF lacks tokenizer.chat_template.
// Each produces the prompt format its model family was trained on.
namespace weir::chat_builtin {

// Gemma 2/3 turns: <start_of_turn>user|model ... <end_of_turn>; the system
// text and a blank line open the first user turn; contents are trimmed. The
// output equals Google's template for system, user and assistant turns.
extern const char* const kGemma;
// Llama 3 headers: <|start_header_id|>role<|end_header_id|>\n\n ... <|eot_id|>.
extern const char* const kLlama3;
// ChatML: <|im_start|>role\n ... <|im_end|>\n, tools in the system turn,
// calls in <tool_call> tags, results in <tool_response> tags.
extern const char* const kChatML;

}  // namespace weir::chat_builtin
