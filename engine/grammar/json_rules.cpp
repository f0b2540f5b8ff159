// JsonRules: JSON's lexical rules as grammar rules, built once per grammar.
#include "engine/grammar/json_rules.h"

#include <string>

namespace weir::grammar {

int32_t JsonRules::whitespace() {
    if (ws_ >= 0) return ws_;
    // ws ::= "" | " " | "\n" indent ; indent_k ::= "" | " " indent_{k-1}
    int32_t indent = g_.addRule("indent0");
    g_.addAlternative(indent, {});
    for (int k = 1; k <= kMaxIndent; ++k) {
        const int32_t r = g_.addRule("indent" + std::to_string(k));
        g_.addAlternative(r, {});
        g_.addAlternative(r, Sequence{byteOf(' '), ruleRef(indent)});
        indent = r;
    }
    ws_ = g_.addRule("ws");
    g_.addAlternative(ws_, {});
    g_.addAlternative(ws_, literal(" "));
    g_.addAlternative(ws_, Sequence{byteOf('\n'), ruleRef(indent)});
    return ws_;
}

int32_t JsonRules::utf8Character() {
    if (char_ >= 0) return char_;
    // Well-formed UTF-8 (RFC 3629 table): no overlongs, no surrogates, nothing past U+10FFFF.
    char_ = g_.addRule("char");
    const Element tail = byteRange(0x80, 0xBF);
    ByteSet ascii;
    for (int b = 0x20; b < 0x80; ++b)
        if (b != '"' && b != '\\') ascii.set(size_t(b));
    g_.addAlternative(char_, {bytesOf(ascii)});
    g_.addAlternative(char_, {byteRange(0xC2, 0xDF), tail});
    g_.addAlternative(char_, {byteOf(0xE0), byteRange(0xA0, 0xBF), tail});
    ByteSet e1;
    for (int b = 0xE1; b <= 0xEF; ++b)
        if (b != 0xED) e1.set(size_t(b));
    g_.addAlternative(char_, {bytesOf(e1), tail, tail});
    g_.addAlternative(char_, {byteOf(0xED), byteRange(0x80, 0x9F), tail});
    g_.addAlternative(char_, {byteOf(0xF0), byteRange(0x90, 0xBF), tail, tail});
    g_.addAlternative(char_, {byteRange(0xF1, 0xF3), tail, tail, tail});
    g_.addAlternative(char_, {byteOf(0xF4), byteRange(0x80, 0x8F), tail, tail});
    // Escapes: \" \\ \/ \b \f \n \r \t \uXXXX.
    ByteSet simple;
    for (char c : std::string("\"\\/bfnrt")) simple.set(uint8_t(c));
    g_.addAlternative(char_, {byteOf('\\'), bytesOf(simple)});
    ByteSet hex;
    for (char c : std::string("0123456789abcdefABCDEF")) hex.set(uint8_t(c));
    g_.addAlternative(char_, {byteOf('\\'), byteOf('u'), bytesOf(hex), bytesOf(hex), bytesOf(hex), bytesOf(hex)});
    return char_;
}

int32_t JsonRules::string() {
    if (string_ >= 0) return string_;
    const int32_t chars = g_.addRule("chars");
    g_.addAlternative(chars, {});
    g_.addAlternative(chars, {ruleRef(utf8Character()), ruleRef(chars)});
    string_ = g_.addRule("string");
    g_.addAlternative(string_, {byteOf('"'), ruleRef(chars), byteOf('"')});
    return string_;
}

int32_t JsonRules::digits(int maxCount, const char* name) {
    int32_t r = g_.addRule(std::string(name) + "0");
    g_.addAlternative(r, {});
    for (int k = 1; k <= maxCount; ++k) {
        const int32_t next = g_.addRule(std::string(name) + std::to_string(k));
        g_.addAlternative(next, {});
        g_.addAlternative(next, {byteRange('0', '9'), ruleRef(r)});
        r = next;
    }
    return r;
}

int32_t JsonRules::integer() {
    if (integer_ >= 0) return integer_;
    intPart_ = g_.addRule("int-part");
    g_.addAlternative(intPart_, literal("0"));
    g_.addAlternative(intPart_, {byteRange('1', '9'), ruleRef(digits(kMaxIntegerDigits - 1, "int-digits"))});
    integer_ = g_.addRule("integer");
    g_.addAlternative(integer_, {ruleRef(intPart_)});
    g_.addAlternative(integer_, {byteOf('-'), ruleRef(intPart_)});
    return integer_;
}

int32_t JsonRules::number() {
    if (number_ >= 0) return number_;
    const int32_t integerRule = integer();
    const int32_t frac = g_.addRule("frac");
    g_.addAlternative(frac, {});
    g_.addAlternative(frac, {byteOf('.'), byteRange('0', '9'), ruleRef(digits(kMaxFractionDigits - 1, "frac-digits"))});
    const int32_t sign = g_.addRule("exp-sign");
    g_.addAlternative(sign, {});
    g_.addAlternative(sign, literal("+"));
    g_.addAlternative(sign, literal("-"));
    const int32_t exp = g_.addRule("exp");
    ByteSet e;
    e.set('e');
    e.set('E');
    g_.addAlternative(exp, {});
    g_.addAlternative(exp, {bytesOf(e), ruleRef(sign), byteRange('0', '9'),
                            ruleRef(digits(kMaxExponentDigits - 1, "exp-digits"))});
    number_ = g_.addRule("number");
    g_.addAlternative(number_, {ruleRef(integerRule), ruleRef(frac), ruleRef(exp)});
    return number_;
}

int32_t JsonRules::boolean() {
    if (boolean_ >= 0) return boolean_;
    boolean_ = g_.addRule("boolean");
    g_.addAlternative(boolean_, literal("true"));
    g_.addAlternative(boolean_, literal("false"));
    return boolean_;
}

int32_t JsonRules::null() {
    if (null_ >= 0) return null_;
    null_ = g_.addRule("null");
    g_.addAlternative(null_, literal("null"));
    return null_;
}

int32_t JsonRules::colonSpace() {
    if (colon_ >= 0) return colon_;
    colon_ = g_.addRule("colon-space");
    g_.addAlternative(colon_, {});
    g_.addAlternative(colon_, literal(" "));
    return colon_;
}

int32_t JsonRules::arrayOf(int32_t item, const std::string& name) {
    // more ::= "" | "," ws item more
    const int32_t more = g_.addRule(name + "-more");
    g_.addAlternative(more, {});
    g_.addAlternative(more, Sequence{byteOf(','), ws(), ruleRef(item), ruleRef(more)});
    const int32_t r = g_.addRule(name);
    g_.addAlternative(r, Sequence{byteOf('['), ws(), byteOf(']')});
    g_.addAlternative(r, Sequence{byteOf('['), ws(), ruleRef(item), ruleRef(more), ws(), byteOf(']')});
    return r;
}

int32_t JsonRules::objectOf(int32_t value, const std::string& name) {
    const int32_t member = g_.addRule(name + "-member");
    g_.addAlternative(member, Sequence{ruleRef(string()), byteOf(':'), ruleRef(colonSpace()), ruleRef(value)});
    const int32_t more = g_.addRule(name + "-more");
    g_.addAlternative(more, {});
    g_.addAlternative(more, Sequence{byteOf(','), ws(), ruleRef(member), ruleRef(more)});
    const int32_t r = g_.addRule(name);
    g_.addAlternative(r, Sequence{byteOf('{'), ws(), byteOf('}')});
    g_.addAlternative(r, Sequence{byteOf('{'), ws(), ruleRef(member), ruleRef(more), ws(), byteOf('}')});
    return r;
}

int32_t JsonRules::anyValue() {
    if (value_ >= 0) return value_;
    value_ = g_.addRule("value");
    object_ = objectOf(value_, "object");
    array_ = arrayOf(value_, "array");
    for (int32_t r : {object_, array_, string(), number(), boolean(), null()}) g_.addAlternative(value_, {ruleRef(r)});
    return value_;
}

int32_t JsonRules::anyObject() {
    anyValue();
    return object_;
}

int32_t JsonRules::anyArray() {
    anyValue();
    return array_;
}

} // namespace weir::grammar
