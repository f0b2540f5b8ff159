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

std::string functionGemmaDeclaration(const jinja::Value& tool) {
    const jinja::Value fn = functionOf(tool);
    jinja::Value decl = jinja::Value::dict();
    if (const jinja::Value* d = fn.get("description"); d && !d->isUndefined()) decl.set("description", *d);
    if (const jinja::Value* p = fn.get("parameters"); p && p->isMapping()) decl.set("parameters", upperTypes(*p));
    return "declaration:" + stringField(fn, "name") + toolsyntax::gemmaValueText(decl, kEscape, true);
}

// A tool result as FunctionGemma reads it: name{key:value,...}.
std::string functionGemmaResponse(const std::string& name, const std::string& content, std::string_view esc) {
    if (auto v = toolsyntax::parseJson(content); v && v->isMapping())
        return name + toolsyntax::gemmaValueText(*v, esc, false);
    jinja::Value d = jinja::Value::dict();
    d.set("value", jinja::Value(content));
    return name + toolsyntax::gemmaValueText(d, esc, false);
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

std::vector<std::string> ToolFormat::stopStrings() const {
    switch (family_) {
    case ToolFamily::FunctionGemma: return {"<start_function_response>"};
    case ToolFamily::Gemma4: return {"<|tool_response>"};
    case ToolFamily::Qwen: return {"<tool_response>"};
    case ToolFamily::Llama3: return {"<|eom_id|>"};
    case ToolFamily::Gemma3:
    case ToolFamily::Generic: return {"```tool_output"};
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

std::string ToolFormat::forcedPrefix(const ToolChoice& choice) const {
    const bool named = choice.mode == ToolChoice::Mode::Function;
    if (!named && choice.mode != ToolChoice::Mode::Required) return {};
    const std::string& n = choice.function;
    switch (family_) {
    case ToolFamily::FunctionGemma: return named ? "<start_function_call>call:" + n + "{" : "<start_function_call>call:";
    case ToolFamily::Gemma4: return named ? "<|tool_call>call:" + n + "{" : "<|tool_call>call:";
    case ToolFamily::Qwen:
        return named ? "<tool_call>\n{\"name\": \"" + n + "\", \"arguments\": " : "<tool_call>\n{\"name\": \"";
    case ToolFamily::Llama3: return named ? "{\"name\": \"" + n + "\", \"parameters\": " : "{\"name\": \"";
    case ToolFamily::Gemma3:
    case ToolFamily::Generic:
        if (takesTools_) return named ? "[" + n + "(" : "[";  // the template asks for Python calls
        return named ? "```tool_call\n{\"name\": \"" + n + "\", \"arguments\": " : "```tool_call\n";
    }
    return {};
}

// ---------------------------------------------------------------- rendering

std::string ToolFormat::instruction(const jinja::Value& tools, const ToolChoice& choice) const {
    std::string out;
    if (family_ == ToolFamily::FunctionGemma) {
        out = kFunctionGemmaTrigger;
        for (const auto& t : tools.asList())
            out += "<start_function_declaration>" + functionGemmaDeclaration(t) + "<end_function_declaration>";
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
            out = "You can call the functions listed below. To call one, reply with nothing but a JSON object "
                  "{\"name\": <function name>, \"parameters\": <object of argument names and values>}. Use "
                  "literal values, not variables. When no function fits, answer in plain words.\n\n" +
                  schema;
        } else {
            out = "You can call the functions listed below. To call one, reply with nothing but a tool_call block "
                  "like this:\n```tool_call\n{\"name\": \"<function name>\", \"arguments\": {\"<argument>\": "
                  "<value>}}\n```\nWrite one JSON object per line to call several functions. Each result comes "
                  "back in a ```tool_output block; then answer with it. When no function fits, answer in plain "
                  "words.\n\nFunctions:\n" +
                  schema;
        }
    }
    if (choice.mode == ToolChoice::Mode::Required) out += "\n\nYou must call at least one of these functions.";
    if (choice.mode == ToolChoice::Mode::Function) out += "\n\nYou must call the function " + choice.function + ".";
    return out;
}

std::string ToolFormat::callText(const jinja::Value& toolCalls) const {
    std::string out;
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
        switch (family_) {
        case ToolFamily::FunctionGemma:
            out += "<start_function_call>call:" + name + toolsyntax::gemmaValueText(args, kEscape, false) +
                   "<end_function_call>";
            break;
        case ToolFamily::Gemma4:
            out += "<|tool_call>call:" + name + toolsyntax::gemmaValueText(args, kGemma4Quote, true) + "<tool_call|>";
            break;
        case ToolFamily::Qwen:
            out += (out.empty() ? "" : "\n") + std::string("<tool_call>\n") + json("arguments") + "\n</tool_call>";
            break;
        case ToolFamily::Llama3:
            out += (out.empty() ? "" : "; ") + json("parameters");
            break;
        case ToolFamily::Gemma3:
        case ToolFamily::Generic:
            out += (out.empty() ? "" : "\n") + json("arguments");
            break;
        }
    }
    if ((family_ == ToolFamily::Gemma3 || family_ == ToolFamily::Generic) && !out.empty())
        out = "```tool_call\n" + out + "\n```";
    return out;
}

std::string ToolFormat::resultText(const std::string& name, const std::string& content) const {
    switch (family_) {
    case ToolFamily::FunctionGemma:
        return "<start_function_response>response:" + functionGemmaResponse(name, content, kEscape) +
               "<end_function_response>";
    case ToolFamily::Gemma4:
        return "<|tool_response>response:" + functionGemmaResponse(name, content, kGemma4Quote) + "<tool_response|>";
    case ToolFamily::Qwen: return "<tool_response>\n" + content + "\n</tool_response>";
    default: return "```tool_output\n" + content + "\n```";
    }
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
        std::string content = stringField(m, "content");
        if (role == "assistant") {
            const jinja::Value* calls = m.get("tool_calls");
            if (calls && calls->isList() && !calls->asList().empty()) {
                for (const auto& c : calls->asList())
                    callNames[stringField(c, "id")] = stringField(functionOf(c), "name");
                const std::string text = callText(*calls);
                content = content.empty() ? text : content + "\n" + text;
            }
        } else if (role == "tool") {
            std::string name = stringField(m, "name");
            if (auto it = callNames.find(stringField(m, "tool_call_id")); name.empty() && it != callNames.end())
                name = it->second;
            if (name.empty()) name = "tool";
            role = "user";
            content = resultText(name, content);
        }
        auto& list = out.mutableList();
        if (!list.empty() && role != "system" && stringField(list.back(), "role") == role) {
            list.back().set("content", jinja::Value(stringField(list.back(), "content") + "\n\n" + content));
            continue;
        }
        jinja::Value d = jinja::Value::dict();
        d.set("role", jinja::Value(role));
        d.set("content", jinja::Value(content));
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
                        encoded.set(k, jinja::Value(toolsyntax::gemmaValueText(v, kEscape, false)));
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
            d.set("content", jinja::Value(functionGemmaResponse(name, stringField(m, "content"), kEscape)));
        }
        out.append(std::move(d));
    }
    return out;
}

std::string ToolFormat::render(const ChatTemplate& chat, const jinja::Value& messages, const jinja::Value& tools,
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
    std::string systemAddition;
    if (useTools) {
        if (takesTools_) {
            if (family_ == ToolFamily::FunctionGemma && !escapesValues_) {
                jinja::Value decls = jinja::Value::list();
                for (const auto& t : active.asList()) decls.append(jinja::Value(functionGemmaDeclaration(t)));
                o.tools = decls;
            } else {
                o.tools = active;
            }
            if (family_ == ToolFamily::FunctionGemma) {
                const bool hasSystem = !msgs.asList().empty() && stringField(msgs.asList()[0], "role") == "system";
                if (!hasSystem) systemAddition = kFunctionGemmaTrigger;
            }
            if (choice.mode == ToolChoice::Mode::Required)
                systemAddition += std::string(systemAddition.empty() ? "" : "\n\n") +
                                  "You must call at least one of the functions.";
            if (choice.mode == ToolChoice::Mode::Function)
                systemAddition += std::string(systemAddition.empty() ? "" : "\n\n") + "You must call the function " +
                                  choice.function + ".";
        } else {
            systemAddition = instruction(active, choice);
        }
    }
    if (!systemAddition.empty()) {
        jinja::Value withSystem = jinja::Value::list();
        const auto& list = msgs.asList();
        if (!list.empty() && stringField(list[0], "role") == "system") {
            jinja::Value first = copyDict(list[0]);
            const std::string existing = stringField(list[0], "content");
            first.set("content", jinja::Value(existing.empty() ? systemAddition : existing + "\n\n" + systemAddition));
            withSystem.append(first);
            for (size_t i = 1; i < list.size(); ++i) withSystem.append(list[i]);
        } else {
            jinja::Value sys = jinja::Value::dict();
            sys.set("role", jinja::Value("system"));
            sys.set("content", jinja::Value(systemAddition));
            withSystem.append(sys);
            for (const auto& m : list) withSystem.append(m);
        }
        msgs = withSystem;
    }
    return chat.renderValues(msgs, o);
}

}  // namespace weir
