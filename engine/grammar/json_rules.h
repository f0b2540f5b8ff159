#pragma once
// The rules of JSON text (RFC 8259) that every JSON grammar shares, added to
// a Grammar on first use: whitespace, strings, numbers, and any value.
//
// Whitespace is where a JSON printer puts it, so that replies read as plain
// JSON (not `]\n,\n"name"`): none before a `,` or `:`, at most one space
// after a `:`, and after `{`, `[`, `,` and before `}`, `]` at most one space,
// or one newline followed by up to kMaxIndent spaces (compact and
// pretty-printed output stay possible, a loop of blank lines does not).
// Two bounds keep a model from running on forever where JSON itself has no
// limit: that whitespace bound, and a number has
// at most kMaxIntegerDigits digits before the point, kMaxFractionDigits after
// it and kMaxExponentDigits in its exponent.
#include <cstdint>

#include "engine/grammar/grammar.h"

namespace weir::grammar {

class JsonRules {
public:
    static constexpr int kMaxIndent = 16;
    static constexpr int kMaxIntegerDigits = 16;
    static constexpr int kMaxFractionDigits = 16;
    static constexpr int kMaxExponentDigits = 3;

    explicit JsonRules(Grammar& grammar) : g_(grammar) {}

    int32_t whitespace();
    int32_t string();        // "...": UTF-8 checked byte by byte, escapes as JSON defines them
    int32_t number();        // -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?
    int32_t integer();       // -?(0|[1-9]d*)
    int32_t boolean();
    int32_t null();
    int32_t anyValue();
    int32_t anyObject();
    int32_t anyArray();

    // "[" ws "]" | "[" ws item ("," ws item)* ws "]": arrays of one kind of
    // item, with no bound on the count.
    int32_t arrayOf(int32_t item, const std::string& name);
    // {"key": value, ...} with any string keys and values of one rule.
    int32_t objectOf(int32_t value, const std::string& name);

    // Between two tokens where a printer may break the line (see above).
    Element ws() { return ruleRef(whitespace()); }
    // After a member's ':': "" | " ".
    int32_t colonSpace();

private:
    int32_t digits(int maxCount, const char* name);  // 0..maxCount digits
    int32_t utf8Character();                          // one character other than '"', '\' and controls

    Grammar& g_;
    int32_t ws_ = -1, string_ = -1, number_ = -1, integer_ = -1, boolean_ = -1, null_ = -1;
    int32_t value_ = -1, object_ = -1, array_ = -1, char_ = -1, intPart_ = -1, colon_ = -1;
};

} // namespace weir::grammar
