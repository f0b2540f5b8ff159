#include "engine/chat/tool_call_parser.h"

#include <algorithm>

#include "engine/chat/tool_syntax.h"

namespace weir {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
    while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
    return s;
}

bool startsWith(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

constexpr std::string_view kPythonTag = "<|python_tag|>";

}  // namespace

ToolCallParser::ToolCallParser(Syntax syntax) : syntax_(std::move(syntax)) {}

bool ToolCallParser::knownName(const std::string& name) const {
    if (name.empty()) return false;
    if (syntax_.toolNames.empty()) return true;
    return std::find(syntax_.toolNames.begin(), syntax_.toolNames.end(), name) != syntax_.toolNames.end();
}

// ---------------------------------------------------------------- reading calls

bool ToolCallParser::readCalls(std::string_view body, std::vector<ToolCall>& out) const {
    std::vector<ToolCall> calls;
    std::string_view b = trim(body);
    const ToolFamily f = syntax_.family;

    if (f == ToolFamily::FunctionGemma || f == ToolFamily::Gemma4) {
        // call:NAME{key:value,...}, possibly several.
        const std::string_view esc = f == ToolFamily::FunctionGemma ? "<escape>" : "<|\"|>";
        size_t p = 0;
        while (p < b.size()) {
            while (p < b.size() && isSpace(b[p])) ++p;
            if (p >= b.size()) break;
            if (b.compare(p, 5, "call:") != 0) return false;
            p += 5;
            const size_t brace = b.find('{', p);
            if (brace == std::string_view::npos) return false;
            const std::string name(trim(b.substr(p, brace - p)));
            if (!knownName(name) || name.find_first_of(" \t\n\r") != std::string::npos) return false;
            p = brace;
            auto args = toolsyntax::parseGemmaValue(b, p, esc);
            if (!args || !args->isMapping()) return false;
            calls.push_back({"", name, toolsyntax::argumentsJson(*args)});
        }
        if (calls.empty()) return false;
        out.insert(out.end(), calls.begin(), calls.end());
        return true;
    }

    // The JSON conventions, and Gemma 3's Python calls.
    if (startsWith(b, kPythonTag)) b = trim(b.substr(kPythonTag.size()));
    if (b.empty()) return false;

    // One JSON call object ({"name", "arguments"|"parameters"} or OpenAI's
    // {"function": {...}}) or a list of them.
    auto fromJson = [this](const jinja::Value& v, std::vector<ToolCall>& into) -> bool {
        auto one = [this, &into](const jinja::Value& item) -> bool {
            if (!item.isMapping()) return false;
            const jinja::Value* fn = item.get("function");
            const jinja::Value& obj = (fn && fn->isMapping()) ? *fn : item;
            const jinja::Value* name = obj.get("name");
            if (!name || !name->isString() || !knownName(name->asString())) return false;
            const jinja::Value* args = obj.get("arguments");
            if (!args || args->isUndefined()) args = obj.get("parameters");
            jinja::Value a = jinja::Value::dict();
            if (args && args->isString()) {
                auto parsed = toolsyntax::parseJson(args->asString());
                if (!parsed || !parsed->isMapping()) return false;
                a = *parsed;
            } else if (args && args->isMapping()) {
                a = *args;
            } else if (args && !args->isNone()) {
                return false;
            }
            into.push_back({"", name->asString(), toolsyntax::argumentsJson(a)});
            return true;
        };
        if (v.isList()) {
            if (v.asList().empty()) return false;
            for (const auto& item : v.asList())
                if (!one(item)) return false;
            return true;
        }
        return one(v);
    };

    if (b.front() == '{' || b.front() == '[') {
        size_t p = 0;
        bool ok = true;
        while (p < b.size()) {
            const size_t end = toolsyntax::jsonContainerEnd(b, p);
            if (end == std::string_view::npos) { ok = false; break; }
            auto v = toolsyntax::parseJson(b.substr(p, end - p));
            if (!v || !fromJson(*v, calls)) { ok = false; break; }
            p = end;
            while (p < b.size() && (isSpace(b[p]) || b[p] == ';' || b[p] == ',')) ++p;
        }
        if (ok && !calls.empty()) {
            out.insert(out.end(), calls.begin(), calls.end());
            return true;
        }
        calls.clear();
    }
    if (auto py = toolsyntax::parsePythonCalls(b)) {
        for (auto& c : *py) {
            if (!knownName(c.name)) return false;
            calls.push_back({"", c.name, toolsyntax::argumentsJson(c.arguments)});
        }
        out.insert(out.end(), calls.begin(), calls.end());
        return true;
    }
    return false;
}

size_t ToolCallParser::readCallPrefix(std::string_view body, std::vector<ToolCall>& out) const {
    if (readCalls(body, out)) return body.size();
    // Calls first, then prose: take the JSON calls at the front.
    size_t p = 0;
    while (p < body.size() && isSpace(body[p])) ++p;
    if (startsWith(body.substr(p), kPythonTag)) p += kPythonTag.size();
    size_t used = 0;
    std::vector<ToolCall> calls;
    for (;;) {
        while (p < body.size() && (isSpace(body[p]) || body[p] == ';')) ++p;
        const size_t end = toolsyntax::jsonContainerEnd(body, p);
        if (end == std::string_view::npos) break;
        if (!readCalls(body.substr(p, end - p), calls)) break;
        p = end;
        used = end;
    }
    if (calls.empty()) return 0;
    out.insert(out.end(), calls.begin(), calls.end());
    return used;
}

// ---------------------------------------------------------------- streaming

void ToolCallParser::emitText(Output& out, std::string_view text) {
    if (text.empty()) return;
    // Whitespace waits for what follows: dropped if only calls come after it.
    std::string all = heldSpace_;
    all.append(text);
    size_t last = all.size();
    while (last > 0 && isSpace(all[last - 1])) --last;
    out.text.append(all, 0, last);
    heldSpace_ = all.substr(last);
}

ToolCallParser::Output ToolCallParser::push(std::string_view delta) {
    Output out;
    if (done_) return out;
    pending_.append(delta);
    process(out, false);
    return out;
}

ToolCallParser::Output ToolCallParser::finish() {
    Output out;
    if (done_) return out;
    process(out, true);
    if (calls_ == 0 && !heldSpace_.empty()) out.text += heldSpace_;
    heldSpace_.clear();
    return out;
}

void ToolCallParser::process(Output& out, bool final) {
    auto takeCalls = [&](std::vector<ToolCall>& calls) {
        heldSpace_.clear();
        calls_ += calls.size();
        out.calls.insert(out.calls.end(), calls.begin(), calls.end());
    };
    for (;;) {
        switch (state_) {
        case State::Text: {
            if (atStart_) {
                size_t ws = 0;
                while (ws < pending_.size() && isSpace(pending_[ws])) ++ws;
                const std::string_view t = std::string_view(pending_).substr(ws);
                if (t.empty()) {
                    if (final) {
                        emitText(out, pending_);
                        pending_.clear();
                    }
                    return;
                }
                bool bare = false, maybe = false;
                for (const auto& s : syntax_.bareStarts) {
                    if (startsWith(t, s)) bare = true;
                    else if (startsWith(s, t)) maybe = true;
                }
                if (bare) {
                    state_ = State::Bare;
                    continue;
                }
                if (maybe && !final) return;
                atStart_ = false;
            }
            // The earliest call or hidden-region marker.
            size_t at = std::string::npos, len = 0, which = 0;
            bool hidden = false;
            auto consider = [&](const std::string& m, size_t idx, bool isHidden) {
                const size_t i = pending_.find(m);
                if (i == std::string::npos) return;
                if (i < at || (i == at && m.size() > len)) {
                    at = i;
                    len = m.size();
                    which = idx;
                    hidden = isHidden;
                }
            };
            for (size_t i = 0; i < syntax_.fences.size(); ++i) consider(syntax_.fences[i].open, i, false);
            for (size_t i = 0; i < syntax_.hidden.size(); ++i) consider(syntax_.hidden[i].open, i, true);
            if (at != std::string::npos) {
                emitText(out, std::string_view(pending_).substr(0, at));
                pending_.erase(0, at + len);
                state_ = hidden ? State::Hidden : State::Fence;
                fence_ = which;
                continue;
            }
            // Hold back a tail that could still become a marker.
            size_t hold = 0;
            if (!final) {
                auto check = [&](const std::string& m) {
                    for (size_t k = std::min(m.size() - 1, pending_.size()); k > hold; --k)
                        if (pending_.compare(pending_.size() - k, k, m, 0, k) == 0) {
                            hold = k;
                            break;
                        }
                };
                for (const auto& f : syntax_.fences) check(f.open);
                for (const auto& h : syntax_.hidden) check(h.open);
            }
            emitText(out, std::string_view(pending_).substr(0, pending_.size() - hold));
            pending_.erase(0, pending_.size() - hold);
            return;
        }
        case State::Fence: {
            const auto& f = syntax_.fences[fence_];
            const size_t j = pending_.find(f.close);
            if (j == std::string::npos && !final) return;
            const std::string body = j == std::string::npos ? pending_ : pending_.substr(0, j);
            std::vector<ToolCall> calls;
            if (readCalls(body, calls)) {
                takeCalls(calls);
                if (syntax_.oneBlockPerTurn) {
                    done_ = true;
                    pending_.clear();
                    heldSpace_.clear();
                    return;
                }
            } else {
                emitText(out, f.open + body + (j == std::string::npos ? "" : f.close));
            }
            pending_.erase(0, j == std::string::npos ? pending_.size() : j + f.close.size());
            state_ = State::Text;
            atStart_ = false;
            if (pending_.empty()) return;
            continue;
        }
        case State::Hidden: {
            const auto& h = syntax_.hidden[fence_];
            const size_t j = pending_.find(h.close);
            if (j == std::string::npos) {
                if (final) pending_.clear();
                return;
            }
            pending_.erase(0, j + h.close.size());
            state_ = State::Text;
            continue;
        }
        case State::Bare: {
            if (!final) {
                if (bareChecked_) return;
                // A JSON reply that turns out not to be a call goes out as soon as it is complete.
                std::string_view b = trim(pending_);
                if (startsWith(b, kPythonTag)) b = trim(b.substr(kPythonTag.size()));
                if (b.empty() || (b.front() != '{' && b.front() != '[')) return;
                const size_t end = toolsyntax::jsonContainerEnd(b, 0);
                if (end == std::string_view::npos) return;
                std::vector<ToolCall> probe;
                if (readCalls(b.substr(0, end), probe)) {
                    bareChecked_ = true;  // a call: keep holding until the reply ends
                    return;
                }
                state_ = State::Text;
                atStart_ = false;
                continue;  // now plain text (markers inside still count)
            }
            std::vector<ToolCall> calls;
            const size_t used = readCallPrefix(pending_, calls);
            if (calls.empty()) {
                emitText(out, pending_);
            } else {
                takeCalls(calls);
                emitText(out, trim(std::string_view(pending_).substr(used)));
            }
            pending_.clear();
            state_ = State::Text;
            atStart_ = false;
            return;
        }
        }
    }
}

}  // namespace weir
