#include "engine/chat/chat_template.h"

#include <algorithm>

#include "engine/chat/builtin_templates.h"
#include "engine/chat/jinja_provenance.h"
#include "engine/chat/jinja_template.h"
#include "weir/base/error.h"

namespace weir {

namespace {

bool contains(const std::string& s, std::string_view needle) { return s.find(needle) != std::string::npos; }

// The family a template's text belongs to, from the turn markers it writes.
std::string detectFamily(const std::string& source) {
    if (contains(source, "<start_of_turn>")) return "gemma";
    if (contains(source, "<|start_header_id|>")) return "llama3";
    if (contains(source, "<|im_start|>")) return "chatml";
    return "jinja";
}

// OpenAI clients send tool-call arguments as JSON text; templates expect the
// object (they tojson it or iterate its items). Text that is not a JSON
// object stays text.
jinja::Value withParsedArguments(const jinja::Value& message) {
    const jinja::Value* calls = message.get("tool_calls");
    if (!calls || !calls->isList()) return message;
    bool anyText = false;
    for (const auto& call : calls->asList()) {
        const jinja::Value* fn = call.get("function");
        const jinja::Value* args = fn ? fn->get("arguments") : call.get("arguments");
        if (args && args->isString()) anyText = true;
    }
    if (!anyText) return message;
    auto parsed = [](const jinja::Value& text) -> jinja::Value {
        try {
            jinja::Value v = jinja::Value::parseJson(text.asString());
            if (v.isMapping()) return v;
        } catch (const Error&) {
        }
        return text;
    };
    auto copyDict = [](const jinja::Value& d) { return d.copyDict(); };
    jinja::Value newCalls = jinja::Value::list();
    for (const auto& call : calls->asList()) {
        if (!call.isMapping()) { newCalls.append(call); continue; }
        jinja::Value c = copyDict(call);
        const jinja::Value* fn = call.get("function");
        if (fn && fn->isMapping()) {
            jinja::Value f = copyDict(*fn);
            if (const jinja::Value* a = fn->get("arguments"); a && a->isString()) f.set("arguments", parsed(*a));
            c.set("function", f);
        } else if (const jinja::Value* a = call.get("arguments"); a && a->isString()) {
            c.set("arguments", parsed(*a));
        }
        newCalls.append(c);
    }
    jinja::Value m = copyDict(message);
    m.set("tool_calls", newCalls);
    return m;
}

class JinjaChatTemplate final : public ChatTemplate {
public:
    JinjaChatTemplate(std::string source, std::string bos, std::string eos, std::string family, bool builtin,
                      std::string note)
        : source_(std::move(source)),
          bos_(std::move(bos)),
          eos_(std::move(eos)),
          family_(std::move(family)),
          builtin_(builtin),
          note_(std::move(note)),
          template_(source_) {
        // Does the template write BOS? Render the smallest conversation and look.
        try {
            std::vector<ChatMessage> probe{{"user", "hi", {}}};
            std::string text = render(probe, true);
            rendersBos_ = !bos_.empty() && text.compare(0, bos_.size(), bos_) == 0;
        } catch (const Error&) {
            rendersBos_ = !bos_.empty() && contains(source_, "bos_token");
        }
    }

    std::string render(const std::vector<ChatMessage>& messages, bool addGenerationPrompt) const override {
        ChatRenderOptions options;
        options.addGenerationPrompt = addGenerationPrompt;
        return render(messages, options);
    }

    std::string render(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options) const override {
        return ChatTemplate::renderMarked(messages, options).text;
    }

    std::string renderValues(const jinja::Value& messages, const ChatRenderOptions& options) const override {
        return renderMarked(messages, options).text;
    }

    MarkedText renderMarked(const jinja::Value& messages, const ChatRenderOptions& options) const override {
        if (!messages.isList()) throw Error("chat messages must be a list, not " + messages.typeName());
        jinja::Value msgs = messages;
        if (options.parseToolCallArguments) {
            jinja::Value converted = jinja::Value::list();
            for (const auto& m : messages.asList()) converted.append(m.isMapping() ? withParsedArguments(m) : m);
            msgs = converted;
        }
        // Everything but the template's own text and the special-token
        // strings is the conversation's: untrusted.
        jinja::Value ctx = jinja::Value::dict();
        ctx.set("messages", jinja::markUntrusted(msgs));
        ctx.set("add_generation_prompt", jinja::Value(options.addGenerationPrompt));
        ctx.set("bos_token", jinja::trustedText(bos_));
        ctx.set("eos_token", jinja::trustedText(eos_));
        if (!options.tools.isUndefined()) ctx.set("tools", jinja::markUntrusted(options.tools));
        if (options.variables.isDict())
            for (const auto& e : options.variables.asDict().entries) ctx.set(e.first, jinja::markUntrusted(e.second));
        jinja::RenderOptions ro;
        ro.fixedNow = options.now;
        return template_.renderMarked(ctx, ro);
    }

    std::string family() const override { return family_; }
    bool isBuiltin() const override { return builtin_; }
    std::string description() const override { return note_.empty() ? family_ : family_ + " (" + note_ + ")"; }
    const std::string& source() const override { return source_; }
    const std::string& bosText() const override { return bos_; }
    const std::string& eosText() const override { return eos_; }
    bool rendersBos() const override { return rendersBos_; }

    std::vector<std::string> endOfTurnStrings() const override {
        // Turn terminators this template writes, then eos. FunctionGemma also
        // stops where a tool result should be inserted.
        static const char* const markers[] = {"<end_of_turn>", "<|eot_id|>", "<|eom_id|>", "<|im_end|>",
                                              "<turn|>", "<start_function_response>", "<|end|>"};
        std::vector<std::string> out;
        for (const char* m : markers)
            if (contains(source_, m)) out.emplace_back(m);
        if (family_ == "gemma" && std::find(out.begin(), out.end(), "<end_of_turn>") == out.end())
            out.emplace_back("<end_of_turn>");
        if (!eos_.empty() && std::find(out.begin(), out.end(), eos_) == out.end()) out.push_back(eos_);
        return out;
    }

private:
    std::string source_, bos_, eos_, family_;
    bool builtin_;
    std::string note_;
    jinja::Template template_;
    bool rendersBos_ = false;
};

}  // namespace

std::unique_ptr<ChatTemplate> ChatTemplate::create(const std::string& templateSource, const std::string& bosText,
                                                   const std::string& eosText) {
    return std::make_unique<JinjaChatTemplate>(templateSource, bosText, eosText, detectFamily(templateSource), false,
                                               "");
}

const char* ChatTemplate::builtinSource(const std::string& family) {
    if (family == "gemma") return chat_builtin::kGemma;
    if (family == "llama3") return chat_builtin::kLlama3;
    if (family == "chatml") return chat_builtin::kChatML;
    return "";
}

std::unique_ptr<ChatTemplate> ChatTemplate::builtin(const std::string& family, const std::string& bosText,
                                                    const std::string& eosText) {
    const char* src = builtinSource(family);
    if (!*src) throw Error("no built-in chat template for '" + family + "' (known: gemma, llama3, chatml)");
    return std::make_unique<JinjaChatTemplate>(src, bosText, eosText, family, true,
                                               "built-in: the GGUF has no tokenizer.chat_template");
}

std::unique_ptr<ChatTemplate> ChatTemplate::forModel(const ChatModelInfo& info) {
    std::string whyBuiltin = "built-in: the GGUF has no tokenizer.chat_template";
    if (!info.chatTemplate.empty()) {
        try {
            return create(info.chatTemplate, info.bosText, info.eosText);
        } catch (const Error& e) {
            // A template using Jinja features we lack: the model still chats in its format.
            whyBuiltin = std::string("built-in: the GGUF's template is not supported: ") + e.what();
        }
    }
    auto has = [&](std::string_view tok) {
        return std::find(info.specialTokens.begin(), info.specialTokens.end(), tok) != info.specialTokens.end();
    };
    std::string family;
    if (has("<start_of_turn>") || info.architecture.rfind("gemma", 0) == 0) family = "gemma";
    else if (has("<|start_header_id|>")) family = "llama3";
    else family = "chatml";  // also the usual format of models with <|im_start|>
    const char* src = builtinSource(family);
    return std::make_unique<JinjaChatTemplate>(src, info.bosText, info.eosText, family, true, whyBuiltin);
}

MarkedText ChatTemplate::renderMarked(const std::vector<ChatMessage>& messages,
                                      const ChatRenderOptions& options) const {
    jinja::Value list = jinja::Value::list();
    for (const auto& m : messages) {
        jinja::Value d = jinja::Value::dict();
        d.set("role", jinja::Value(m.role));
        d.set("content", jinja::Value(m.content));
        if (m.fields.isDict())
            for (const auto& e : m.fields.asDict().entries) d.set(e.first, e.second);
        else if (!m.fields.isUndefined())
            throw Error("chat message fields must be a dict, not " + m.fields.typeName());
        list.append(std::move(d));
    }
    return renderMarked(list, options);
}

bool ChatTemplate::addBosWhenTokenizing(std::string_view text, bool tokenizerAddsBos) const {
    if (!tokenizerAddsBos) return false;
    const std::string& bos = bosText();
    return bos.empty() || text.substr(0, bos.size()) != bos;
}

}  // namespace weir
