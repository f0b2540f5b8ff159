#include "engine/tokenizer/pretokenizer.h"

#include "engine/tokenizer/unicode_classes.h"
#include "weir/base/error.h"

#include <string>

namespace weir::tok {
namespace {

// Per code point facts the regexes test, computed once per text.
struct CharInfo {
    bool letter = false, number = false, punct = false, space = false;
};

// One pre-tokenizer pass over a segment [begin, end) of code points.
// Out-of-segment positions read as "nothing": not a letter, number, space,
// and not a character at all (lookahead stops at the segment's end).
class SegmentSplitter {
public:
    SegmentSplitter(const std::vector<uint32_t>& cps, const std::vector<CharInfo>& info,
                    size_t begin, size_t end, std::vector<uint32_t>& out)
        : cps_(cps), info_(info), begin_(begin), end_(end), prevEnd_(begin), out_(out) {}

    void gpt2();
    void llama3(bool digitsOfThree);

private:
    bool in(size_t p) const { return p >= begin_ && p < end_; }
    uint32_t cp(size_t p) const { return in(p) ? cps_[p] : 0xFFFFFFFFu; }
    bool letter(size_t p) const { return in(p) && info_[p].letter; }
    bool number(size_t p) const { return in(p) && info_[p].number; }
    bool space(size_t p) const { return in(p) && info_[p].space; }
    // [^\s\p{L}\p{N}] and a real character
    bool other(size_t p) const { return in(p) && !info_[p].letter && !info_[p].number && !info_[p].space; }
    static uint32_t lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

    void emit(size_t end) {
        if (end > prevEnd_) out_.push_back(uint32_t(end - prevEnd_));
        prevEnd_ = end;
    }
    // 's 't 're 've 'm 'll 'd at p (optionally case-insensitive); returns its length or 0.
    size_t contraction(size_t p, bool anyCase) const;

    const std::vector<uint32_t>& cps_;
    const std::vector<CharInfo>& info_;
    size_t begin_, end_, prevEnd_;
    std::vector<uint32_t>& out_;
};

size_t SegmentSplitter::contraction(size_t p, bool anyCase) const {
    if (cp(p) != '\'' || !in(p + 1)) return 0;
    auto c = [&](size_t q) { return anyCase ? lower(cp(q)) : cp(q); };
    const uint32_t a = c(p + 1);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (!in(p + 2)) return 0;
    const uint32_t b = c(p + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

void SegmentSplitter::gpt2() {
    size_t pos = begin_;
    while (pos < end_) {
        if (size_t n = contraction(pos, false)) {
            pos += n;
            emit(pos);
            continue;
        }
        // An optional leading space joins the run that follows it.
        const size_t q = cp(pos) == ' ' ? pos + 1 : pos;
        if (letter(q)) {
            pos = q;
            while (letter(pos)) ++pos;
            emit(pos);
            continue;
        }
        if (number(q)) {
            pos = q;
            while (number(pos)) ++pos;
            emit(pos);
            continue;
        }
        if (other(q)) {
            pos = q;
            while (other(pos)) ++pos;
            emit(pos);
            continue;
        }
        size_t nws = 0;
        while (space(pos + nws)) ++nws;
        if (nws > 1 && in(pos + nws)) {
            // \s+(?!\S): leave the last space to prefix the next word
            pos += nws - 1;
        } else if (nws > 0) {
            pos += nws;
        } else {
            ++pos;
        }
        emit(pos);
    }
}

void SegmentSplitter::llama3(bool digitsOfThree) {
    size_t pos = begin_;
    while (pos < end_) {
        if (size_t n = contraction(pos, true)) {
            pos += n;
            emit(pos);
            continue;
        }
        const uint32_t c = cp(pos);
        // [^\r\n\p{L}\p{N}]?\p{L}+
        if (c != '\r' && c != '\n' && !number(pos) && (letter(pos) || letter(pos + 1))) {
            ++pos;
            while (letter(pos)) ++pos;
            emit(pos);
            continue;
        }
        // \p{N}{1,3} (Llama 3) or \p{N} (Qwen 2)
        if (number(pos)) {
            if (!digitsOfThree) {
                emit(++pos);
                continue;
            }
            size_t start = pos;
            while (number(pos)) {
                ++pos;
                if (pos - start == 3) {
                    emit(pos);
                    start = pos;
                }
            }
            emit(pos);
            continue;
        }
        // " ?[^\s\p{L}\p{N}]+[\r\n]*" (a lone trailing space ends up here too)
        if (c == ' ' ? !in(pos + 1) || other(pos + 1) : other(pos)) {
            if (c == ' ') ++pos;
            while (other(pos)) ++pos;
            while (cp(pos) == '\r' || cp(pos) == '\n') ++pos;
            emit(pos);
            continue;
        }
        size_t nws = 0, afterLastNewline = 0;
        while (space(pos + nws)) {
            const uint32_t w = cp(pos + nws);
            ++nws;
            if (w == '\r' || w == '\n') afterLastNewline = pos + nws;
        }
        if (afterLastNewline > 0) {
            pos = afterLastNewline;        // \s*[\r\n]+
        } else if (nws > 1 && in(pos + nws)) {
            pos += nws - 1;                // \s+(?!\S)
        } else if (nws > 0) {
            pos += nws;                    // \s+
        } else {
            ++pos;
        }
        emit(pos);
    }
}

// Splits every segment into maximal runs where pred holds and the gaps
// between them (the way llama.cpp keeps both matches and non-matches).
template <typename Pred>
std::vector<uint32_t> splitRuns(const std::vector<uint32_t>& segments, Pred pred) {
    std::vector<uint32_t> out;
    size_t start = 0;
    for (uint32_t len : segments) {
        const size_t end = start + len;
        size_t p = start;
        while (p < end) {
            const bool inRun = pred(p);
            size_t q = p + 1;
            while (q < end && pred(q) == inRun) ++q;
            out.push_back(uint32_t(q - p));
            p = q;
        }
        start = end;
    }
    return out;
}

bool isAsciiDigit(uint32_t c) { return c >= '0' && c <= '9'; }

void defaultChain(const std::vector<uint32_t>& cps, const std::vector<CharInfo>& info,
                  std::vector<uint32_t>& out) {
    // 1. [\p{P}\$\+<=>\^~\|]+
    std::vector<uint32_t> segs{uint32_t(cps.size())};
    segs = splitRuns(segs, [&](size_t p) {
        const uint32_t c = cps[p];
        return info[p].punct || c == '$' || c == '+' || c == '<' || c == '=' || c == '>' ||
               c == '^' || c == '~' || c == '|';
    });
    // 2. the GPT-2 regex inside each piece
    std::vector<uint32_t> words;
    size_t start = 0;
    for (uint32_t len : segs) {
        SegmentSplitter(cps, info, start, start + len, words).gpt2();
        start += len;
    }
    // 3. \p{N}+
    words = splitRuns(words, [&](size_t p) { return info[p].number; });
    // 4. [0-9][0-9][0-9]: non-overlapping triples from the left of each piece
    start = 0;
    for (uint32_t len : words) {
        const size_t end = start + len;
        size_t gapStart = start, p = start;
        while (p + 3 <= end) {
            if (isAsciiDigit(cps[p]) && isAsciiDigit(cps[p + 1]) && isAsciiDigit(cps[p + 2])) {
                if (p > gapStart) out.push_back(uint32_t(p - gapStart));
                out.push_back(3);
                p += 3;
                gapStart = p;
            } else {
                ++p;
            }
        }
        if (end > gapStart) out.push_back(uint32_t(end - gapStart));
        start = end;
    }
}

// \p{N} first: every number code point is a piece of its own; then the
// GPT-2 regex inside the pieces between them.
void starcoderChain(const std::vector<uint32_t>& cps, const std::vector<CharInfo>& info,
                    std::vector<uint32_t>& out) {
    size_t gapStart = 0;
    auto gap = [&](size_t end) {
        if (end > gapStart) SegmentSplitter(cps, info, gapStart, end, out).gpt2();
    };
    for (size_t p = 0; p < cps.size(); ++p) {
        if (!info[p].number) continue;
        gap(p);
        out.push_back(1);
        gapStart = p + 1;
    }
    gap(cps.size());
}

} // namespace

PreTokenizer preTokenizerFromName(std::string_view name) {
    if (name == "llama3" || name == "llama-v3" || name == "llama-bpe") return PreTokenizer::Llama3;
    if (name == "qwen2" || name == "deepseek-r1-qwen") return PreTokenizer::Qwen2;
    if (name == "gpt-2" || name == "gpt2") return PreTokenizer::Gpt2;
    if (name.empty() || name == "default") return PreTokenizer::Default;
    if (name == "starcoder" || name == "smollm" || name == "refact") return PreTokenizer::Starcoder;
    throw Error("tokenizer: unsupported pre-tokenizer '" + std::string(name) +
                "' (tokenizer.ggml.pre); supported: llama-bpe, llama3, qwen2, gpt-2, starcoder, smollm, refact, default");
}

void preTokenize(PreTokenizer kind, const std::vector<uint32_t>& cps, std::vector<uint32_t>& wordLengths) {
    std::vector<CharInfo> info(cps.size());
    for (size_t i = 0; i < cps.size(); ++i) {
        const CharClass cls = charClass(cps[i]);
        info[i].letter = cls == CharClass::Letter;
        info[i].number = cls == CharClass::Number;
        info[i].punct = cls == CharClass::Punctuation;
        info[i].space = isWhitespace(cps[i]);
    }
    switch (kind) {
    case PreTokenizer::Gpt2:
        SegmentSplitter(cps, info, 0, cps.size(), wordLengths).gpt2();
        break;
    case PreTokenizer::Llama3:
        SegmentSplitter(cps, info, 0, cps.size(), wordLengths).llama3(true);
        break;
    case PreTokenizer::Qwen2:
        SegmentSplitter(cps, info, 0, cps.size(), wordLengths).llama3(false);
        break;
    case PreTokenizer::Default:
        defaultChain(cps, info, wordLengths);
        break;
    case PreTokenizer::Starcoder:
        starcoderChain(cps, info, wordLengths);
        break;
    }
}

} // namespace weir::tok
