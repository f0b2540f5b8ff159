#pragma once
// Tool calling for each chat format Weir knows. A ToolFormat says how a
// model's family declares tools in the prompt, how it writes a call, which
// markers end a turn that called a tool, and makes the parser for its calls.
//
//   Gemma3         no tool tokens: tools as JSON with an instruction in the
//                  system text; calls as JSON ({"name", "arguments"}) in a
//                  ```tool_call block or bare, or Python calls [f(a=1)];
//                  results in a ```tool_output block
//   FunctionGemma  <start_function_declaration>declaration:f{...}<end_…>,
//                  <start_function_call>call:f{a:<escape>x<escape>}<end_function_call>,
//                  stop at <start_function_response>
//   Gemma4         <|tool>declaration:…<tool|>, <|tool_call>call:f{a:<|"|>x<|"|>}<tool_call|>,
//                  stop at <|tool_response>
//   Llama3         a bare JSON reply {"name", "parameters"}, optionally after <|python_tag|>
//   Qwen           <tool_call>{"name", "arguments"}</tool_call>, results in <tool_response>
//   Generic        any other template: the Gemma3 convention in its own turns
//
// When the model's template takes `tools` (it mentions them), the template
// renders the declarations and the conversation's calls itself; otherwise
// Weir writes the family's instruction into the system message and renders
// calls and results as text in the family's syntax (Gemma 3's own template
// has no tools).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/chat/jinja_value.h"
#include "weir/types/tool_calls.h"

namespace weir {

enum class ToolFamily : uint8_t { Gemma3, FunctionGemma, Gemma4, Llama3, Qwen, Generic };
const char* toolFamilyName(ToolFamily family);

class ToolCallParser;

class ToolFormat {
public:
    // The convention of `chat`, from the markers its template writes.
    // `vocabularyHas` (optional) says whether a token text exists: a Gemma
    // model without a tool template but with FunctionGemma's tokens is one.
    static ToolFormat detect(const ChatTemplate& chat,
                             const std::function<bool(std::string_view)>& vocabularyHas = {});
    ToolFormat(ToolFamily family, bool templateTakesTools, bool templateTakesToolCalls,
               bool templateEscapesValues = true);

    ToolFamily family() const { return family_; }
    const char* name() const { return toolFamilyName(family_); }
    bool templateTakesTools() const { return takesTools_; }

    // Prompt text of a conversation with tools. `messages`: a list of dicts
    // in OpenAI's shape (role, content as a string, tool_calls with
    // JSON-string arguments, tool_call_id, name); `tools`: OpenAI's tool list
    // ({"type": "function", "function": {"name", "description",
    // "parameters"}}). With Mode::None or no tools it renders as plain chat.
    // Throws weir::Error for messages the template rejects or tools without a
    // name.
    std::string render(const ChatTemplate& chat, const jinja::Value& messages, const jinja::Value& tools,
                       const ToolChoice& choice, const ChatRenderOptions& base) const;
    // The same with the client's text marked untrusted (see
    // ChatTemplate::renderMarked); Weir's own call and result markers are trusted.
    MarkedText renderMarked(const ChatTemplate& chat, const jinja::Value& messages, const jinja::Value& tools,
                            const ToolChoice& choice, const ChatRenderOptions& base) const;

    // tool_choice "required" or a named function: the start of a call in the
    // family's syntax, to append to the prompt (and to feed the parser first)
    // so that the reply is a call; empty for "auto" and "none".
    std::string forcedPrefix(const ToolChoice& choice) const;
    // The same with a named function's name marked untrusted.
    MarkedText forcedPrefixMarked(const ToolChoice& choice) const;

    // Where a call written as JSON {"name", "arguments"} opens and what
    // closes it, in this family's syntax, for a lazy constraint on
    // tool_choice "auto" (OutputConstraint::triggers): Qwen's <tool_call> ...
    // </tool_call>, the ```tool_call fence of Gemma 3 and Generic (when the
    // template does not ask for Python calls). Empty `open` for families whose
    // calls are not that JSON (FunctionGemma, Gemma 4, Llama 3's "parameters").
    struct CallMarkers {
        std::vector<std::string> open;
        std::string close;
    };
    CallMarkers jsonCallMarkers() const;

    // Markers that end a turn which called a tool (the tool's reply comes from
    // the client, not the model); use with ChatTemplate::endOfTurnStrings().
    std::vector<std::string> stopStrings() const;
    // Every family's tool-result opening among those stop strings: a reply
    // that begins with one is a model echoing the template, not inventing a
    // result, and must not end there (StopStringMatcher's openers: kept as text).
    static std::vector<std::string> resultOpeners();
    // True when the call markers are control tokens: ask the engine for
    // generated text with special tokens shown (GenerateRequest::showSpecialTokens).
    bool markersAreSpecialTokens() const;

    // A parser for one reply; calls to names outside `toolNames` are malformed.
    std::unique_ptr<ToolCallParser> makeParser(std::vector<std::string> toolNames) const;

    // The function names of an OpenAI tool list (skipping entries without one).
    static std::vector<std::string> toolNames(const jinja::Value& tools);

private:
    jinja::Value fallbackMessages(const jinja::Value& messages, const jinja::Value& tools,
                                  const ToolChoice& choice) const;
    jinja::Value functionGemmaMessages(const jinja::Value& messages, const jinja::Value& tools) const;
    MarkedText instruction(const jinja::Value& tools, const ToolChoice& choice) const;
    MarkedText callText(const jinja::Value& toolCalls) const;
    MarkedText resultText(const std::string& name, const std::string& content) const;

    ToolFamily family_;
    bool takesTools_, takesToolCalls_, escapesValues_;
};

}  // namespace weir
