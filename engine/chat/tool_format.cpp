#include "engine/chat/tool_format.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "engine/chat/tool_call_parser.h"
#include "engine/chat/tool_syntax.h"
#include "weir/base/error.h"

namespace weir {

namespace {

bool contains(const std::string& s, std::string_view needle) { return s.find(needle) != std::string::npos; }

// `word` as a whole identifier somewhere in the text (a template that reads
// the `tools` variable, not just "tool_calls").
bool mentionsWord(const std::string& text, std::string_view word) {
    auto identChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (size_t i = text.find(word); i != std::string::npos; i = text.find(word, i + 1)) {
        const bool before = i > 0 && identChar(text[i - 1]);
        const size_t end = i + word.size();
        const bool after = end < text.size() && identChar(text[end]);
        if (!before && !after) return true;
    }
    return false;
}

std::string stringField(const jinja::Value& d, std::string_view key) {
    const jinja::Value* v = d.isMapping() ? d.get(key) : nullptr;
    return v && v->isString() ? v->asString() : std::string();
}

// A message field as text with its provenance: a string Weir assembled keeps
// its marks, anything else the client sent is untrusted as a whole.
MarkedText markedField(const jinja::Value& d, std::string_view key) {
    const jinja::Value* v = d.isMapping() ? d.get(key) : nullptr;
    MarkedText out;
    if (!v || !v->isString()) return out;
    if (v->hasProvenance()) out = {v->asString(), v->untrustedRanges()};
    else out.appendUntrusted(v->asString());
    return out;
}

MarkedText untrustedText(std::string_view s) {
    MarkedText out;
    out.appendUntrusted(s);
    return out;
}

jinja::Value markedValue(MarkedText m) { return jinja::Value::text(std::move(m.text), std::move(m.untrusted)); }

MarkedText joined(MarkedText a, std::string_view separator, const MarkedText& b) {
    a.appendTrusted(separator);
    a.append(b);
    return a;
}

jinja::Value copyDict(const jinja::Value& d) {
    jinja::Value c = jinja::Value::dict();
    if (d.isDict()) c.mutableDict().entries = d.asDict().entries;
    return c;
}

// The function object of an OpenAI tool entry ({"type": "function", "function": {...}}),
// or the entry itself when it is already one.
jinja::Value functionOf(const jinja::Value& tool) {
    const jinja::Value* fn = tool.isMapping() ? tool.get("function") : nullptr;
    return fn && fn->isMapping() ? *fn : tool;
}

// Tool-call arguments as data: JSON text parsed, anything else as it is.
jinja::Value argumentsValue(const jinja::Value& call) {
    const jinja::Value fn = functionOf(call);
    const jinja::Value* args = fn.get("arguments");
    if (!args) return jinja::Value::dict();
    if (args->isString()) {
        if (auto v = toolsyntax::parseJson(args->asString())) return *v;
    }
    return *args;
}

// FunctionGemma's schema notation: type names upper case, keys sorted, strings
// between <escape> markers.
jinja::Value upperTypes(const jinja::Value& v) {
    if (v.isList()) {
        jinja::Value l = jinja::Value::list();
        for (const auto& item : v.asList()) l.append(upperTypes(item));
        return l;
    }
    if (!v.isMapping()) return v;
    jinja::Value d = jinja::Value::dict();
    for (const auto& [k, item] : v.asDict().entries) {
        if (k == "type" && item.isString()) {
            std::string t = item.asString();
            for (char& c : t) c = char(std::toupper(static_cast<unsigned char>(c)));
            d.set(k, jinja::Value(t));
        } else if (k == "properties" && item.isMapping()) {
            // Property names are data, not schema keywords.
            jinja::Value props = jinja::Value::dict();
            for (const auto& [name, schema] : item.asDict().entries) props.set(name, upperTypes(schema));
            d.set(k, props);
        } else {
            d.set(k, upperTypes(item));
        }
    }
    return d;
}

constexpr const char* kEscape = "<escape>";
constexpr const char* kGemma4Quote = "<|\"|>";
constexpr const char* kFunctionGemmaTrigger = "You are a model that can do function calling with the following functions";

MarkedText functionGemmaDeclaration(const jinja::Value& tool) {
    const jinja::Value fn = functionOf(tool);
    jinja::Value decl = jinja::Value::dict();
    if (const jinja::Value* d = fn.get("description"); d && !d->isUndefined()) decl.set("description", *d);
    if (const jinja::Value* p = fn.get("parameters"); p && p->isMapping()) decl.set("parameters", upperTypes(*p));
    MarkedText out;
    out.appendTrusted("declaration:");
    out.appendUntrusted(stringField(fn, "name"));
    out.append(toolsyntax::gemmaValueMarked(decl, kEscape, true));
    return out;
}

// A tool result as FunctionGemma reads it: name{key:value,...}.
MarkedText functionGemmaResponse(const std::string& name, const std::string& content, std::string_view esc) {
    MarkedText out = untrustedText(name);
    if (auto v = toolsyntax::parseJson(content); v && v->isMapping()) {
        out.append(toolsyntax::gemmaValueMarked(*v, esc, false));
        return out;
    }
    jinja::Value d = jinja::Value::dict();
    d.set("value", jinja::Value(content));
    out.append(toolsyntax::gemmaValueMarked(d, esc, false));
    return out;
}

}  // namespace

const char* toolFamilyName(ToolFamily family) {
    switch (family) {
    case ToolFamily::Gemma3: return "gemma3";
    case ToolFamily::FunctionGemma: return "functiongemma";
    case ToolFamily::Gemma4: return "gemma4";
    case ToolFamily::Llama3: return "llama3";
    case ToolFamily::Qwen: return "qwen";
    case ToolFamily::Generic: return "generic";
    }
    return "?";
}

ToolFormat::ToolFormat(ToolFamily family, bool templateTakesTools, bool templateTakesToolCalls,
                       bool templateEscapesValues)
    : family_(family), takesTools_(templateTakesTools), takesToolCalls_(templateTakesToolCalls),
      escapesValues_(templateEscapesValues) {}

ToolFormat ToolFormat::detect(const ChatTemplate& chat, const std::function<bool(std::string_view)>& vocabularyHas) {
    const std::string& src = chat.source();
    const bool takesTools = mentionsWord(src, "tools");
    const bool takesCalls = contains(src, "tool_calls");
    ToolFamily f;
    if (contains(src, "<start_function_call>") || contains(src, "<start_function_declaration>"))
        f = ToolFamily::FunctionGemma;
    else if (contains(src, "<|tool_call>"))
        f = ToolFamily::Gemma4;
    else if (contains(src, "<tool_call>"))
        f = ToolFamily::Qwen;
    else if (contains(src, "<|start_header_id|>"))
        f = ToolFamily::Llama3;
    else if (contains(src, "<start_of_turn>"))
        f = vocabularyHas && vocabularyHas("<start_function_call>") ? ToolFamily::FunctionGemma : ToolFamily::Gemma3;
    else
        f = ToolFamily::Generic;
    // Tool tokens without a template that writes them: the JSON convention.
    if (!takesTools && (f == ToolFamily::Gemma4 || f == ToolFamily::Qwen)) f = ToolFamily::Generic;
    const bool escapes = f != ToolFamily::FunctionGemma || contains(src, kEscape) || !takesTools;
    return ToolFormat(f, takesTools, takesCalls, escapes);
}

std::vector<std::string> ToolFormat::toolNames(const jinja::Value& tools) {
    std::vector<std::string> names;
    if (!tools.isList()) return names;
    for (const auto& t : tools.asList()) {
        const std::string n = stringField(functionOf(t), "name");
        if (!n.empty()) names.push_back(n);
    }
    return names;
}

namespace {

constexpr const char* kFunctionGemmaResult = "<start_function_response>";
constexpr const char* kGemma4Result = "<|tool_response>";
constexpr const char* kQwenResult = "<tool_response>";
constexpr const char* kFencedResult = "```tool_output";

} // namespace

std::vector<std::string> ToolFormat::stopStrings() const {
    switch (family_) {
    case ToolFamily::FunctionGemma: return {kFunctionGemmaResult};
    case ToolFamily::Gemma4: return {kGemma4Result};
    case ToolFamily::Qwen: return {kQwenResult};
    case ToolFamily::Llama3: return {"<|eom_id|>"};
    case ToolFamily::Gemma3:
    case ToolFamily::Generic: return {kFencedResult};
    }
    return {};
}

std::vector<std::string> ToolFormat::resultOpeners() {
    return {kFunctionGemmaResult, kGemma4Result, kQwenResult, kFencedResult};
}

ToolFormat::CallMarkers ToolFormat::jsonCallMarkers() const {
    switch (family_) {
    case ToolFamily::Qwen: return {{"<tool_call>"}, "</tool_call>"};
    case ToolFamily::Gemma3:
    case ToolFamily::Generic:
        if (takesTools_) return {};  // the template asks for Python calls
        return {{"```tool_call"}, "```"};
    case ToolFamily::FunctionGemma:
    case ToolFamily::Gemma4:
    case ToolFamily::Llama3: return {};
    }
    return {};
}

bool ToolFormat::markersAreSpecialTokens() const {
    return family_ == ToolFamily::FunctionGemma || family_ == ToolFamily::Gemma4 || family_ == ToolFamily::Qwen ||
           family_ == ToolFamily::Llama3;
}

std::unique_ptr<ToolCallParser> ToolFormat::makeParser(std::vector<std::string> names) const {
    ToolCallParser::Syntax s;
    s.family = family_;
    switch (family_) {
    case ToolFamily::FunctionGemma:
        s.fences = {{"<start_function_call>", "<end_function_call>"}};
        break;
    case ToolFamily::Gemma4:
        s.fences = {{"<|tool_call>", "<tool_call|>"}};
        s.hidden = {{"<|channel>", "<channel|>"}};
        break;
    case ToolFamily::Qwen:
        s.fences = {{"<tool_call>", "</tool_call>"}};
        break;
    case ToolFamily::Llama3:
        s.fences = {{"```json", "```"}, {"```tool_call", "```"}};
        s.bareStarts = {"{", "[", "<|python_tag|>"};
        break;
    case ToolFamily::Gemma3:
    case ToolFamily::Generic:
        s.fences = {{"```tool_call", "```"}, {"```tool_code", "```"}, {"```json", "```"}};
        s.bareStarts = {"{", "["};
        for (const auto& n : names) s.bareStarts.push_back(n + "(");
        s.oneBlockPerTurn = true;
        break;
    }
    s.toolNames = std::move(names);
    return std::make_unique<ToolCallParser>(std::move(s));
}

std::string ToolFormat::forcedPrefix(const ToolChoice& choice) const { return forcedPrefixMarked(choice).text; }

MarkedText ToolFormat::forcedPrefixMarked(const ToolChoice& choice) const {
    const bool named = choice.mode == ToolChoice::Mode::Function;
    MarkedText out;
    if (!named && choice.mode != ToolChoice::Mode::Required) return out;
    // The call's opening in the family's syntax; a named function's name is the client's.
    auto call = [&](const char* open, const char* afterName) {
        out.appendTrusted(open);
        if (!named) return;
        out.appendUntrusted(choice.function);
        out.appendTrusted(afterName);
    };
    switch (family_) {
    case ToolFamily::FunctionGemma: call("<start_function_call>call:", "{"); break;
    case ToolFamily::Gemma4: call("<|tool_call>call:", "{"); break;
    case ToolFamily::Qwen: call("<tool_call>\n{\"name\": \"", "\", \"arguments\": "); break;
    case ToolFamily::Llama3: call("{\"name\": \"", "\", \"parameters\": "); break;
    case ToolFamily::Gemma3:
    case ToolFamily::Generic:
        if (takesTools_) call("[", "(");  // the template asks for Python calls
        else if (named) call("```tool_call\n{\"name\": \"", "\", \"arguments\": ");
        else call("```tool_call\n", "");
        break;
    }
    return out;
}

// ---------------------------------------------------------------- rendering

MarkedText ToolFormat::instruction(const jinja::Value& tools, const ToolChoice& choice) const {
    MarkedText out;
    if (family_ == ToolFamily::FunctionGemma) {
        out.appendTrusted(kFunctionGemmaTrigger);
        for (const auto& t : tools.asList()) {
            out.appendTrusted("<start_function_declaration>");
            out.append(functionGemmaDeclaration(t));
            out.appendTrusted("<end_function_declaration>");
        }
    } else {
        jinja::Value fns = jinja::Value::list();
        for (const auto& t : tools.asList()) fns.append(functionOf(t));
        jinja::Value::JsonStyle style;
        style.pretty = true;
        style.indent = "  ";
        style.itemSeparator = ",";
        std::string schema;
        try {
            schema = fns.toJson(style);
        } catch (const Error&) {
            schema = "[]";
        }
        if (family_ == ToolFamily::Llama3) {
            out.appendTrusted(
                "You can call the functions listed below. To call one, reply with nothing but a JSON object "
                "{\"name\": <function name>, \"parameters\": <object of argument names and values>}. Use "
                "literal values, not variables. When no function fits, answer in plain words.\n\n");
        } else {
            out.appendTrusted(
                "You can call the functions listed below. To call one, reply with nothing but a tool_call block "
                "like this:\n```tool_call\n{\"name\": \"<function name>\", \"arguments\": {\"<argument>\": "
                "<value>}}\n```\nWrite one JSON object per line to call several functions. Each result comes "
                "back in a ```tool_output block; then answer with it. When no function fits, answer in plain "
                "words.\n\nFunctions:\n");
        }
        out.appendUntrusted(schema);  // the client's names, descriptions and schemas
    }
    if (choice.mode == ToolChoice::Mode::Required) out.appendTrusted("\n\nYou must call at least one of these functions.");
    if (choice.mode == ToolChoice::Mode::Function) {
        out.appendTrusted("\n\nYou must call the function ");
        out.appendUntrusted(choice.function);
        out.appendTrusted(".");
    }
    return out;
}

MarkedText ToolFormat::callText(const jinja::Value& toolCalls) const {
    MarkedText out;
    if (!toolCalls.isList()) return out;
    for (const auto& call : toolCalls.asList()) {
        const jinja::Value fn = functionOf(call);
        const std::string name = stringField(fn, "name");
        const jinja::Value args = argumentsValue(call);
        auto json = [&](const char* argsKey) {
            jinja::Value o = jinja::Value::dict();
            o.set("name", jinja::Value(name));
            o.set(argsKey, args);
            try {
                return o.toJson();
            } catch (const Error&) {
                return std::string("{}");
            }
        };
        const bool first = out.text.empty();
        switch (family_) {
        case ToolFamily::FunctionGemma:
            out.appendTrusted("<start_function_call>call:");
            out.appendUntrusted(name);
            out.append(toolsyntax::gemmaValueMarked(args, kEscape, false));
            out.appendTrusted("<end_function_call>");
            break;
        case ToolFamily::Gemma4:
            out.appendTrusted("<|tool_call>call:");
            out.appendUntrusted(name);
            out.append(toolsyntax::gemmaValueMarked(args, kGemma4Quote, true));
            out.appendTrusted("<tool_call|>");
            break;
        case ToolFamily::Qwen:
            out.appendTrusted(first ? "<tool_call>\n" : "\n<tool_call>\n");
            out.appendUntrusted(json("arguments"));
            out.appendTrusted("\n</tool_call>");
            break;
        case ToolFamily::Llama3:
            if (!first) out.appendTrusted("; ");
            out.appendUntrusted(json("parameters"));
            break;
        case ToolFamily::Gemma3:
        case ToolFamily::Generic:
            if (!first) out.appendTrusted("\n");
            out.appendUntrusted(json("arguments"));
            break;
        }
    }
    if ((family_ == ToolFamily::Gemma3 || family_ == ToolFamily::Generic) && !out.text.empty()) {
        MarkedText fenced;
        fenced.appendTrusted("```tool_call\n");
        fenced.append(out);
        fenced.appendTrusted("\n```");
        out = std::move(fenced);
    }
    return out;
}

MarkedText ToolFormat::resultText(const std::string& name, const std::string& content) const {
    MarkedText out;
    switch (family_) {
    case ToolFamily::FunctionGemma:
        out.appendTrusted("<start_function_response>response:");
        out.append(functionGemmaResponse(name, content, kEscape));
        out.appendTrusted("<end_function_response>");
        break;
    case ToolFamily::Gemma4:
        out.appendTrusted("<|tool_response>response:");
        out.append(functionGemmaResponse(name, content, kGemma4Quote));
        out.appendTrusted("<tool_response|>");
        break;
    case ToolFamily::Qwen:
        out.appendTrusted("<tool_response>\n");
        out.appendUntrusted(content);
        out.appendTrusted("\n</tool_response>");
        break;
    default:
        out.appendTrusted("```tool_output\n");
        out.appendUntrusted(content);
        out.appendTrusted("\n```");
        break;
    }
    return out;
}

// For templates that know neither tools nor tool calls: calls become the
// assistant's text in the family's syntax, results become user turns, and
// neighbouring turns of one role are joined (Gemma requires alternation).
jinja::Value ToolFormat::fallbackMessages(const jinja::Value& messages, const jinja::Value& tools,
                                          const ToolChoice& choice) const {
    (void)tools;
    (void)choice;
    std::map<std::string, std::string> callNames;  // tool_call_id -> function name
    jinja::Value out = jinja::Value::list();
    for (const auto& m : messages.asList()) {
        std::string role = stringField(m, "role");
        MarkedText content = markedField(m, "content");
        if (role == "assistant") {
            const jinja::Value* calls = m.get("tool_calls");
            if (calls && calls->isList() && !calls->asList().empty()) {
                for (const auto& c : calls->asList())
                    callNames[stringField(c, "id")] = stringField(functionOf(c), "name");
                MarkedText text = callText(*calls);
                content = content.text.empty() ? std::move(text) : joined(std::move(content), "\n", text);
            }
        } else if (role == "tool") {
            std::string name = stringField(m, "name");
            if (auto it = callNames.find(stringField(m, "tool_call_id")); name.empty() && it != callNames.end())
                name = it->second;
            if (name.empty()) name = "tool";
            role = "user";
            content = resultText(name, content.text);
        }
        auto& list = out.mutableList();
        if (!list.empty() && role != "system" && stringField(list.back(), "role") == role) {
            list.back().set("content", markedValue(joined(markedField(list.back(), "content"), "\n\n", content)));
            continue;
        }
        jinja::Value d = jinja::Value::dict();
        d.set("role", jinja::Value(role));
        d.set("content", markedValue(std::move(content)));
        out.append(std::move(d));
    }
    return out;
}

// FunctionGemma templates that paste strings (LiteRT's): arguments and results
// are written in its value notation before the template sees them.
jinja::Value ToolFormat::functionGemmaMessages(const jinja::Value& messages, const jinja::Value& tools) const {
    (void)tools;
    std::map<std::string, std::string> callNames;
    jinja::Value out = jinja::Value::list();
    for (const auto& m : messages.asList()) {
        jinja::Value d = copyDict(m);
        const std::string role = stringField(m, "role");
        if (const jinja::Value* calls = m.get("tool_calls"); role == "assistant" && calls && calls->isList()) {
            jinja::Value newCalls = jinja::Value::list();
            for (const auto& c : calls->asList()) {
                const jinja::Value fn = functionOf(c);
                callNames[stringField(c, "id")] = stringField(fn, "name");
                jinja::Value encoded = jinja::Value::dict();
                const jinja::Value args = argumentsValue(c);
                if (args.isMapping())
                    for (const auto& [k, v] : args.asDict().entries)
                        encoded.set(k, markedValue(toolsyntax::gemmaValueMarked(v, kEscape, false)));
                jinja::Value f = jinja::Value::dict();
                f.set("name", jinja::Value(stringField(fn, "name")));
                f.set("arguments", encoded);
                jinja::Value nc = jinja::Value::dict();
                nc.set("type", jinja::Value("function"));
                nc.set("function", f);
                newCalls.append(nc);
            }
            d.set("tool_calls", newCalls);
        } else if (role == "tool") {
            std::string name = stringField(m, "name");
            if (auto it = callNames.find(stringField(m, "tool_call_id")); name.empty() && it != callNames.end())
                name = it->second;
            if (name.empty()) name = "tool";
            d.set("content", markedValue(functionGemmaResponse(name, stringField(m, "content"), kEscape)));
        }
        out.append(std::move(d));
    }
    return out;
}

std::string ToolFormat::render(const ChatTemplate& chat, const jinja::Value& messages, const jinja::Value& tools,
                               const ToolChoice& choice, const ChatRenderOptions& base) const {
    return renderMarked(chat, messages, tools, choice, base).text;
}

MarkedText ToolFormat::renderMarked(const ChatTemplate& chat, const jinja::Value& messages, const jinja::Value& tools,
                                    const ToolChoice& choice, const ChatRenderOptions& base) const {
    if (!messages.isList()) throw Error("chat messages must be a list");
    ChatRenderOptions o = base;
    o.tools = jinja::Value();
    jinja::Value active = jinja::Value::list();
    if (choice.mode != ToolChoice::Mode::None && tools.isList()) {
        for (const auto& t : tools.asList()) {
            const std::string name = stringField(functionOf(t), "name");
            if (name.empty()) throw Error("a tool has no function name");
            if (choice.mode != ToolChoice::Mode::Function || name == choice.function) active.append(t);
        }
        if (choice.mode == ToolChoice::Mode::Function && active.asList().empty())
            throw Error("tool_choice names the function '" + choice.function + "', which is not among the tools");
    }
    const bool useTools = !active.asList().empty();

    jinja::Value msgs = messages;
    if (family_ == ToolFamily::FunctionGemma && takesTools_ && !escapesValues_) msgs = functionGemmaMessages(msgs, active);
    else if (!takesToolCalls_ || !takesTools_) msgs = fallbackMessages(msgs, active, choice);

    // Text for the system message: the whole instruction when the template
    // cannot declare tools, only the tool_choice demand when it can.
    MarkedText systemAddition;
    if (useTools) {
        if (takesTools_) {
            if (family_ == ToolFamily::FunctionGemma && !escapesValues_) {
                jinja::Value decls = jinja::Value::list();
                for (const auto& t : active.asList()) decls.append(markedValue(functionGemmaDeclaration(t)));
                o.tools = decls;
            } else {
                o.tools = active;
            }
            if (family_ == ToolFamily::FunctionGemma) {
                const bool hasSystem = !msgs.asList().empty() && stringField(msgs.asList()[0], "role") == "system";
                if (!hasSystem) systemAddition.appendTrusted(kFunctionGemmaTrigger);
            }
            if (choice.mode == ToolChoice::Mode::Required) {
                if (!systemAddition.text.empty()) systemAddition.appendTrusted("\n\n");
                systemAddition.appendTrusted("You must call at least one of the functions.");
            }
            if (choice.mode == ToolChoice::Mode::Function) {
                if (!systemAddition.text.empty()) systemAddition.appendTrusted("\n\n");
                systemAddition.appendTrusted("You must call the function ");
                systemAddition.appendUntrusted(choice.function);
                systemAddition.appendTrusted(".");
            }
        } else {
            systemAddition = instruction(active, choice);
        }
    }
    if (!systemAddition.text.empty()) {
        jinja::Value withSystem = jinja::Value::list();
        const auto& list = msgs.asList();
        if (!list.empty() && stringField(list[0], "role") == "system") {
            jinja::Value first = copyDict(list[0]);
            MarkedText existing = markedField(list[0], "content");
            first.set("content", markedValue(existing.text.empty() ? std::move(systemAddition)
                                                                   : joined(std::move(existing), "\n\n", systemAddition)));
            withSystem.append(first);
            for (size_t i = 1; i < list.size(); ++i) withSystem.append(list[i]);
        } else {
            jinja::Value sys = jinja::Value::dict();
            sys.set("role", jinja::Value("system"));
            sys.set("content", markedValue(std::move(systemAddition)));
            withSystem.append(sys);
            for (const auto& m : list) withSystem.append(m);
        }
        msgs = withSystem;
    }
    return chat.renderMarked(msgs, o);
}

}  // namespace weir
