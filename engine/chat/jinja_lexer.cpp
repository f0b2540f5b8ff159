#include "engine/chat/jinja_lexer.h"

#include <algorithm>
#include <cstring>

#include "engine/chat/jinja_value.h"
#include "weir/base/error.h"

namespace weir::jinja {

std::string describe(const SourceLoc& loc) {
    return "line " + std::to_string(loc.line) + ", column " + std::to_string(loc.column);
}

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isNameChar(char c) { return isNameStart(c) || isDigit(c); }

// Length of the Python-whitespace run (\s) starting at pos.
size_t spaceRun(std::string_view s, size_t pos) {
    size_t p = pos;
    while (p < s.size()) {
        unsigned char c = static_cast<unsigned char>(s[p]);
        if (c < 0x80) {
            if (!py::isSpace(c)) break;
            ++p;
            continue;
        }
        // Multi-byte: decode one code point.
        size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 1;
        std::u32string cp = py::toU32(s.substr(p, len));
        if (cp.size() != 1 || !py::isSpace(cp[0])) break;
        p += len;
    }
    return p - pos;
}

// Python's str.rstrip() (unicode whitespace).
std::string_view rstripView(std::string_view s) {
    std::string stripped = py::strip(s, false, true);
    return s.substr(0, stripped.size());
}

// True if the text is non-empty and only Python whitespace.
bool allSpace(std::string_view s) { return !s.empty() && spaceRun(s, 0) == s.size(); }

class Lexer {
public:
    explicit Lexer(std::string_view raw) {
        // jinja2 treats \r\n, \r and \n as line breaks, writes them as \n, and
        // drops one trailing newline (keep_trailing_newline=False).
        src_.reserve(raw.size());
        for (size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '\r') {
                src_.push_back('\n');
                if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
            } else {
                src_.push_back(raw[i]);
            }
        }
        if (!src_.empty() && src_.back() == '\n') src_.pop_back();
        lineStarts_.push_back(0);
        for (size_t i = 0; i < src_.size(); ++i)
            if (src_[i] == '\n') lineStarts_.push_back(i + 1);
    }

    std::vector<Token> run() {
        bool lineStarting = true;
        while (pos_ < src_.size()) {
            // Find the next tag start: {{, {% or {#.
            size_t tag = std::string_view::npos;
            for (size_t p = src_.find('{', pos_); p != std::string::npos; p = src_.find('{', p + 1)) {
                if (p + 1 < src_.size() && (src_[p + 1] == '{' || src_[p + 1] == '%' || src_[p + 1] == '#')) {
                    tag = p;
                    break;
                }
            }
            if (tag == std::string_view::npos) {
                emitText(std::string_view(src_).substr(pos_), pos_);
                pos_ = src_.size();
                break;
            }
            char kind = src_[tag + 1];
            char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
            if (sign != '-' && sign != '+') sign = '\0';
            std::string_view text = std::string_view(src_).substr(pos_, tag - pos_);
            if (sign == '-') {
                text = rstripView(text);
            } else if (sign != '+' && kind != '{') {
                // lstrip_blocks: drop spaces between the line start and a block or comment tag.
                size_t lpos = text.rfind('\n');
                lpos = lpos == std::string_view::npos ? 0 : lpos + 1;
                if ((lpos > 0 || lineStarting) && allSpace(text.substr(lpos))) text = text.substr(0, lpos);
            }
            emitText(text, pos_);
            size_t afterStart = tag + 2 + (sign ? 1 : 0);
            if (kind == '#') {
                lineStarting = lexComment(tag, afterStart);
            } else if (kind == '%' && isRawStart(afterStart)) {
                lineStarting = lexRaw(tag, afterStart);
            } else {
                lineStarting = lexTag(kind == '{', tag, afterStart);
            }
        }
        Token end;
        end.type = TokenType::End;
        end.loc = locate(src_.size());
        tokens_.push_back(end);
        return std::move(tokens_);
    }

private:
    std::string src_;
    std::vector<size_t> lineStarts_;
    size_t pos_ = 0;
    std::vector<Token> tokens_;

    SourceLoc locate(size_t offset) const {
        auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
        size_t line = static_cast<size_t>(it - lineStarts_.begin());
        size_t col = offset - lineStarts_[line - 1] + 1;
        return {static_cast<int>(line), static_cast<int>(col)};
    }

    [[noreturn]] void fail(size_t offset, const std::string& what) const {
        throw Error("chat template: " + describe(locate(offset)) + ": " + what);
    }

    void emitText(std::string_view text, size_t offset) {
        if (text.empty()) return;
        Token t;
        t.type = TokenType::Text;
        t.text = std::string(text);
        t.loc = locate(offset);
        tokens_.push_back(std::move(t));
    }

    void push(TokenType type, size_t offset, std::string text = {}) {
        Token t;
        t.type = type;
        t.text = std::move(text);
        t.loc = locate(offset);
        tokens_.push_back(std::move(t));
    }

    // Matches the end of a block tag at p: "+%}", "-%}" plus following
    // whitespace, or "%}" plus one newline (trim_blocks). Returns the end
    // offset or npos.
    size_t matchBlockEnd(size_t p, const char* close) const {
        std::string_view s(src_);
        if (p < s.size() && s[p] == '+' && s.substr(p + 1, 2) == close) return p + 3;
        if (p < s.size() && s[p] == '-' && s.substr(p + 1, 2) == close) return p + 3 + spaceRun(s, p + 3);
        if (s.substr(p, 2) == close) return (p + 2 < s.size() && s[p + 2] == '\n') ? p + 3 : p + 2;
        return std::string_view::npos;
    }

    // Comment: ends at the first "#}" (a "-" or "+" right before it is its sign).
    bool lexComment(size_t tagStart, size_t bodyStart) {
        size_t close = src_.find("#}", bodyStart);
        if (close == std::string::npos) fail(tagStart, "missing end of comment tag");
        size_t end;
        if (close > bodyStart && src_[close - 1] == '-') end = close + 2 + spaceRun(src_, close + 2);
        else if (close > bodyStart && src_[close - 1] == '+') end = close + 2;
        else end = (close + 2 < src_.size() && src_[close + 2] == '\n') ? close + 3 : close + 2;
        pos_ = end;
        return src_[end - 1] == '\n';
    }

    bool isRawStart(size_t p) const {
        p += spaceRun(src_, p);
        if (src_.compare(p, 3, "raw") != 0) return false;
        if (p + 3 < src_.size() && isNameChar(src_[p + 3])) return false;
        return true;
    }

    // {% raw %}...{% endraw %}: the body is literal text.
    bool lexRaw(size_t tagStart, size_t afterStart) {
        size_t p = afterStart + spaceRun(src_, afterStart) + 3;
        p += spaceRun(src_, p);
        // The raw start tag ends with "-%}" plus whitespace or a bare "%}" (no trim).
        size_t bodyStart;
        if (src_.compare(p, 3, "-%}") == 0) bodyStart = p + 3 + spaceRun(src_, p + 3);
        else if (src_.compare(p, 2, "%}") == 0) bodyStart = p + 2;
        else fail(p, "expected '%}' after 'raw'");
        bool lineStarting = src_[bodyStart - 1] == '\n';
        // Find "{%[-+]? endraw ...%}".
        for (size_t q = src_.find("{%", bodyStart); q != std::string::npos; q = src_.find("{%", q + 1)) {
            size_t r = q + 2;
            char sign = (r < src_.size() && (src_[r] == '-' || src_[r] == '+')) ? src_[r] : '\0';
            if (sign) ++r;
            r += spaceRun(src_, r);
            if (src_.compare(r, 6, "endraw") != 0) continue;
            r += 6;
            r += spaceRun(src_, r);
            size_t end = matchBlockEnd(r, "%}");
            if (end == std::string::npos) continue;
            std::string_view body = std::string_view(src_).substr(bodyStart, q - bodyStart);
            if (sign == '-') {
                body = rstripView(body);
            } else if (sign != '+') {
                size_t lpos = body.rfind('\n');
                lpos = lpos == std::string_view::npos ? 0 : lpos + 1;
                if ((lpos > 0 || lineStarting) && allSpace(body.substr(lpos))) body = body.substr(0, lpos);
            }
            emitText(body, bodyStart);
            pos_ = end;
            return src_[end - 1] == '\n';
        }
        fail(tagStart, "missing end of raw directive");
    }

    // Tokens inside {{ }} or {% %}.
    bool lexTag(bool variable, size_t tagStart, size_t p) {
        push(variable ? TokenType::VarBegin : TokenType::BlockBegin, tagStart);
        std::vector<char> balance;
        for (;;) {
            if (p >= src_.size()) fail(tagStart, variable ? "unexpected end of template, expected '}}'"
                                                          : "unexpected end of template, expected '%}'");
            if (balance.empty()) {
                size_t end = std::string::npos;
                if (variable) {
                    if (src_[p] == '-' && src_.compare(p + 1, 2, "}}") == 0) end = p + 3 + spaceRun(src_, p + 3);
                    else if (src_.compare(p, 2, "}}") == 0) end = p + 2;
                } else {
                    end = matchBlockEnd(p, "%}");
                }
                if (end != std::string::npos) {
                    push(variable ? TokenType::VarEnd : TokenType::BlockEnd, p);
                    pos_ = end;
                    return src_[end - 1] == '\n';
                }
            }
            size_t ws = spaceRun(src_, p);
            if (ws) { p += ws; continue; }
            char c = src_[p];
            if (isDigit(c)) { p = lexNumber(p); continue; }
            if (isNameStart(c)) {
                size_t q = p;
                while (q < src_.size() && isNameChar(src_[q])) ++q;
                push(TokenType::Name, p, src_.substr(p, q - p));
                p = q;
                continue;
            }
            if (c == '\'' || c == '"') { p = lexString(p); continue; }
            static const char* const ops[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~",
                                              "[", "]", "(", ")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";"};
            bool matched = false;
            for (const char* op : ops) {
                size_t n = std::strlen(op);
                if (src_.compare(p, n, op) != 0) continue;
                char o = op[0];
                if (n == 1 && (o == '(' || o == '[' || o == '{')) {
                    balance.push_back(o == '(' ? ')' : o == '[' ? ']' : '}');
                } else if (n == 1 && (o == ')' || o == ']' || o == '}')) {
                    if (balance.empty()) fail(p, std::string("unexpected '") + o + "'");
                    if (balance.back() != o)
                        fail(p, std::string("unexpected '") + o + "', expected '" + balance.back() + "'");
                    balance.pop_back();
                }
                push(TokenType::Operator, p, op);
                p += n;
                matched = true;
                break;
            }
            if (!matched) fail(p, std::string("unexpected char '") + c + "'");
        }
    }

    size_t lexNumber(size_t p) {
        std::string_view s(src_);
        auto digitsRun = [&](size_t q, auto isDig) {
            // (\d+_)*\d+ : digits with single underscores between them
            size_t start = q;
            while (q < s.size() && isDig(s[q])) {
                ++q;
                if (q + 1 < s.size() && s[q] == '_' && isDig(s[q + 1])) ++q;
            }
            return q - start;
        };
        auto dec = [](char c) { return isDigit(c); };
        // Float: digits ( (.digits)? e[+-]?digits | .digits )
        size_t intLen = digitsRun(p, dec);
        size_t q = p + intLen;
        size_t floatEnd = std::string::npos;
        {
            size_t r = q;
            size_t fracEnd = r;
            if (r < s.size() && s[r] == '.' && r + 1 < s.size() && isDigit(s[r + 1])) {
                fracEnd = r + 1 + digitsRun(r + 1, dec);
            }
            size_t e = fracEnd;
            if (e < s.size() && (s[e] == 'e' || s[e] == 'E')) {
                size_t t = e + 1;
                if (t < s.size() && (s[t] == '+' || s[t] == '-')) ++t;
                if (t < s.size() && isDigit(s[t])) floatEnd = t + digitsRun(t, dec);
            }
            if (floatEnd == std::string::npos && fracEnd != r) floatEnd = fracEnd;
        }
        if (floatEnd != std::string::npos) {
            std::string text;
            for (size_t i = p; i < floatEnd; ++i)
                if (s[i] != '_') text.push_back(s[i]);
            Token t;
            t.type = TokenType::Float;
            t.floatValue = std::strtod(text.c_str(), nullptr);
            t.text = text;
            t.loc = locate(p);
            tokens_.push_back(std::move(t));
            return floatEnd;
        }
        // Integer: 0b / 0o / 0x prefixes, or decimal.
        int base = 10;
        size_t start = p;
        if (s[p] == '0' && p + 1 < s.size()) {
            char k = s[p + 1] | 0x20;
            if (k == 'b') base = 2;
            else if (k == 'o') base = 8;
            else if (k == 'x') base = 16;
        }
        auto isBaseDigit = [base](char c) {
            if (base == 2) return c == '0' || c == '1';
            if (base == 8) return c >= '0' && c <= '7';
            if (base == 16) return isDigit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
            return isDigit(c);
        };
        size_t end;
        if (base != 10) {
            size_t r = p + 2;
            if (r < s.size() && s[r] == '_') ++r;  // 0x_ff is allowed
            size_t n = digitsRun(r, isBaseDigit);
            if (n == 0) fail(p, "invalid number literal");
            start = r;
            end = r + n;
        } else if (s[p] == '0') {
            // "0", "00", "0_0": a decimal zero
            end = p + 1;
            while (end < s.size() && (s[end] == '0' || (s[end] == '_' && end + 1 < s.size() && s[end + 1] == '0')))
                ++end;
        } else {
            end = p + intLen;
        }
        uint64_t v = 0;
        for (size_t i = start; i < end; ++i) {
            char c = s[i];
            if (c == '_') continue;
            unsigned d = isDigit(c) ? unsigned(c - '0') : unsigned((c | 0x20) - 'a' + 10);
            if (v > (UINT64_MAX - d) / unsigned(base)) fail(p, "integer literal too large");
            v = v * base + d;
        }
        if (v > uint64_t(INT64_MAX)) fail(p, "integer literal too large");
        Token t;
        t.type = TokenType::Integer;
        t.intValue = static_cast<int64_t>(v);
        t.text = std::string(s.substr(p, end - p));
        t.loc = locate(p);
        tokens_.push_back(std::move(t));
        return end;
    }

    // A quoted string with Python escapes (jinja2 decodes them with
    // 'unicode-escape'); unknown escapes keep their backslash.
    size_t lexString(size_t p) {
        char quote = src_[p];
        std::string out;
        size_t q = p + 1;
        for (;;) {
            if (q >= src_.size()) fail(p, "unterminated string literal");
            char c = src_[q];
            if (c == quote) break;
            if (c != '\\') { out.push_back(c); ++q; continue; }
            if (q + 1 >= src_.size()) fail(p, "unterminated string literal");
            char e = src_[q + 1];
            q += 2;
            auto hexValue = [&](int digits) -> char32_t {
                char32_t v = 0;
                for (int i = 0; i < digits; ++i) {
                    if (q >= src_.size()) fail(p, "truncated escape in string literal");
                    char h = src_[q++];
                    v <<= 4;
                    if (isDigit(h)) v |= h - '0';
                    else if ((h | 0x20) >= 'a' && (h | 0x20) <= 'f') v |= (h | 0x20) - 'a' + 10;
                    else fail(p, "truncated escape in string literal");
                }
                return v;
            };
            switch (e) {
                case '\n': break;  // line continuation
                case '\\': out.push_back('\\'); break;
                case '\'': out.push_back('\''); break;
                case '"': out.push_back('"'); break;
                case 'a': out.push_back('\a'); break;
                case 'b': out.push_back('\b'); break;
                case 'f': out.push_back('\f'); break;
                case 'n': out.push_back('\n'); break;
                case 'r': out.push_back('\r'); break;
                case 't': out.push_back('\t'); break;
                case 'v': out.push_back('\v'); break;
                case 'x': out += py::toUtf8(std::u32string(1, hexValue(2))); break;
                case 'u': out += py::toUtf8(std::u32string(1, hexValue(4))); break;
                case 'U': {
                    char32_t v = hexValue(8);
                    if (v > 0x10ffff) fail(p, "illegal Unicode character in string literal");
                    out += py::toUtf8(std::u32string(1, v));
                    break;
                }
                case 'N': fail(p, "\\N{...} escapes are not supported");
                default:
                    if (e >= '0' && e <= '7') {
                        char32_t v = e - '0';
                        for (int i = 0; i < 2 && q < src_.size() && src_[q] >= '0' && src_[q] <= '7'; ++i)
                            v = v * 8 + (src_[q++] - '0');
                        out += py::toUtf8(std::u32string(1, v));
                    } else {
                        out.push_back('\\');
                        out.push_back(e);
                    }
            }
        }
        Token t;
        t.type = TokenType::String;
        t.text = std::move(out);
        t.loc = locate(p);
        tokens_.push_back(std::move(t));
        return q + 1;
    }
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace weir::jinja
