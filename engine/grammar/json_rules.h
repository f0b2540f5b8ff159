#pragma once
// The rules of JSON text (RFC 8259) that every JSON grammar shares, added to
// a Grammar on first use: whitespace, strings, numbers, and any value.
//
// The text is JSON on one line with plain spacing, as OpenAI's structured
// output and Python's json.dumps write it: nothing after "{" and "[" or
// before "}", "]", "," and ":", and at most one space after "," and ":"
// (so a reply does not come out as `]\n,\n"name"`, and a document is one
// line where several calls are written one per line). This also keeps a
// model from running on forever in whitespace, where JSON has no limit;
// and a number has
// at most kMaxIntegerDigits digits before the point, kMaxFractionDigits after
// it and kMaxExponentDigits in its exponent.
#include <cstdint>

#include "engine/grammar/grammar.h"

namespace weir::grammar {

class JsonRules {
public:
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

    // "[]" | "[" item ("," ws item)* "]": arrays of one kind of item, with
    // no bound on the count.
    int32_t arrayOf(int32_t item, const std::string& name);
    // {"key": value, ...} with any string keys and values of one rule.
    int32_t objectOf(int32_t value, const std::string& name);

    // After a "," or ":": "" | " ".
    Element ws() { return ruleRef(whitespace()); }

private:
    int32_t digits(int maxCount, const char* name);  // 0..maxCount digits
    int32_t utf8Character();                          // one character other than '"', '\' and controls

    Grammar& g_;
    int32_t ws_ = -1, string_ = -1, number_ = -1, integer_ = -1, boolean_ = -1, null_ = -1;
    int32_t value_ = -1, object_ = -1, array_ = -1, char_ = -1, intPart_ = -1;
};

} // namespace weir::grammar
