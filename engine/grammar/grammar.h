#pragma once
// A context-free grammar over bytes, the form every output constraint is
// compiled into (JSON Schema, any JSON object). A rule is a list of
// alternatives; an alternative is a sequence of elements, each a set of bytes
// (matches one byte) or a reference to a rule. Text is bytes, not characters:
// UTF-8 is spelled out byte by byte by the rules that allow it, so a token
// that ends in the middle of a character simply leaves the grammar in the
// middle of that character.
//
// Rules must not be left-recursive (a rule reaching itself before any byte):
// the automaton refuses such a grammar when it meets one.
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weir::grammar {

using ByteSet = std::bitset<256>;

struct Element {
    enum class Kind : uint8_t { Bytes, Rule, End };
    Kind kind = Kind::End;
    int32_t rule = -1;   // Rule: the referenced rule
    ByteSet bytes;       // Bytes: the bytes it matches
};

using Sequence = std::vector<Element>;

// Building blocks for alternatives.
Element bytesOf(const ByteSet& set);
Element byteOf(uint8_t b);
Element byteRange(uint8_t first, uint8_t last);
Element ruleRef(int32_t rule);
Sequence literal(std::string_view text);  // one element per byte
Sequence operator+(Sequence a, const Sequence& b);
Sequence operator+(Sequence a, const Element& b);

class Grammar {
public:
    // A new rule with no alternatives yet; `name` is for messages and dumps.
    int32_t addRule(std::string name);
    void addAlternative(int32_t rule, Sequence sequence);
    void setRoot(int32_t rule) { root_ = rule; }

    int32_t root() const { return root_; }
    int32_t ruleCount() const { return int32_t(names_.size()); }
    const std::string& ruleName(int32_t rule) const { return names_[size_t(rule)]; }

    // The flat form the automaton walks: every alternative's elements laid
    // out one after another, each alternative closed by an End element.
    // Built on first use; the grammar must not change afterwards.
    const std::vector<Element>& elements() const;
    // Index in elements() where each alternative of `rule` starts.
    const std::vector<int32_t>& alternativeStarts(int32_t rule) const;

    // GBNF-like text, for tests and error messages.
    std::string dump() const;

private:
    void flatten() const;

    std::vector<std::string> names_;
    std::vector<std::vector<Sequence>> rules_;
    int32_t root_ = -1;
    mutable std::vector<Element> flat_;
    mutable std::vector<std::vector<int32_t>> starts_;
    mutable bool flattened_ = false;
};

} // namespace weir::grammar
