// Grammar: rules of alternatives, flattened once for the automaton.
#include "engine/grammar/grammar.h"

#include "weir/base/error.h"

namespace weir::grammar {

Element bytesOf(const ByteSet& set) {
    Element e;
    e.kind = Element::Kind::Bytes;
    e.bytes = set;
    return e;
}

Element byteOf(uint8_t b) {
    ByteSet s;
    s.set(b);
    return bytesOf(s);
}

Element byteRange(uint8_t first, uint8_t last) {
    ByteSet s;
    for (int b = first; b <= last; ++b) s.set(size_t(b));
    return bytesOf(s);
}

Element ruleRef(int32_t rule) {
    Element e;
    e.kind = Element::Kind::Rule;
    e.rule = rule;
    return e;
}

Sequence literal(std::string_view text) {
    Sequence s;
    s.reserve(text.size());
    for (char c : text) s.push_back(byteOf(uint8_t(c)));
    return s;
}

Sequence operator+(Sequence a, const Sequence& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

Sequence operator+(Sequence a, const Element& b) {
    a.push_back(b);
    return a;
}

int32_t Grammar::addRule(std::string name) {
    if (flattened_) throw Error("grammar: rule added after the grammar was flattened");
    names_.push_back(std::move(name));
    rules_.emplace_back();
    return int32_t(names_.size()) - 1;
}

void Grammar::addAlternative(int32_t rule, Sequence sequence) {
    if (flattened_) throw Error("grammar: alternative added after the grammar was flattened");
    rules_.at(size_t(rule)).push_back(std::move(sequence));
}

void Grammar::flatten() const {
    if (flattened_) return;
    if (root_ < 0 || root_ >= ruleCount()) throw Error("grammar: no root rule");
    starts_.assign(rules_.size(), {});
    for (size_t r = 0; r < rules_.size(); ++r) {
        if (rules_[r].empty()) throw Error("grammar: rule '" + names_[r] + "' has no alternative");
        for (const Sequence& alt : rules_[r]) {
            starts_[r].push_back(int32_t(flat_.size()));
            for (const Element& e : alt) {
                if (e.kind == Element::Kind::Rule && (e.rule < 0 || e.rule >= ruleCount()))
                    throw Error("grammar: rule '" + names_[r] + "' refers to a rule that does not exist");
                if (e.kind != Element::Kind::End) flat_.push_back(e);
            }
            flat_.push_back(Element{});
        }
    }
    flattened_ = true;
}

const std::vector<Element>& Grammar::elements() const {
    flatten();
    return flat_;
}

const std::vector<int32_t>& Grammar::alternativeStarts(int32_t rule) const {
    flatten();
    return starts_.at(size_t(rule));
}

namespace {

std::string byteText(int b) {
    if (b >= 0x20 && b < 0x7f && b != '\\' && b != ']' && b != '-' && b != '"') return std::string(1, char(b));
    static const char* hex = "0123456789ABCDEF";
    return std::string("\\x") + hex[b >> 4] + hex[b & 15];
}

std::string setText(const ByteSet& s) {
    if (s.count() == 1)
        for (int b = 0; b < 256; ++b)
            if (s.test(size_t(b))) return "[" + byteText(b) + "]";
    std::string out = "[";
    for (int b = 0; b < 256;) {
        if (!s.test(size_t(b))) {
            ++b;
            continue;
        }
        int e = b;
        while (e + 1 < 256 && s.test(size_t(e + 1))) ++e;
        out += byteText(b);
        if (e > b) out += "-" + byteText(e);
        b = e + 1;
    }
    return out + "]";
}

} // namespace

std::string Grammar::dump() const {
    std::string out;
    for (size_t r = 0; r < rules_.size(); ++r) {
        out += names_[r] + " ::=";
        for (size_t a = 0; a < rules_[r].size(); ++a) {
            if (a) out += " |";
            if (rules_[r][a].empty()) out += " \"\"";
            for (const Element& e : rules_[r][a])
                out += " " + (e.kind == Element::Kind::Rule ? names_[size_t(e.rule)] : setText(e.bytes));
        }
        out += "\n";
    }
    return out;
}

} // namespace weir::grammar
