// Tokenizer tests. Token ids are checked against llama.cpp's for a 255-string
// corpus on six vocabularies (reference data from
// tests/reference/make_tokenizer_reference.py); the rest checks behaviour on
// small hand-made vocabularies whose expected output follows from the rules.
#include "tests/support/json_reading.h"
#include "tests/support/test_files.h"
#include "tests/support/text_match.h"
#include "tests/support/weir_test.h"

#include <chrono>
#include <filesystem>

#include <cstdio>

#include <ctime>
#include <map>
#include <memory>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/pretokenizer.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"
#include "weir/base/error.h"

using weir::TokenId;
using weir::Tokenizer;
using weir::TokenType;
using weir::Vocabulary;

namespace {

std::string dataDir() { return weirtest::environment("WEIR_TEST_DATA") + "/tokenizer"; }
std::string sourceDir() { return weirtest::environment("WEIR_SOURCE_DIR"); }

// Where each reference vocabulary lives; "gpt-2-default" is the GPT-2 file
// with its pre-tokenizer switched to "default" (as the reference script does).
std::string vocabPath(const std::string& name) {
    if (name == "gemma3") return weirtest::environment("WEIR_MODEL");
    const std::string file = name == "gpt-2-default" ? "gpt-2" : name;
    return sourceDir() + "/models/vocab/ggml-vocab-" + file + ".gguf";
}

bool validUtf8(const std::string& s) { return weir::tok::sanitizeUtf8(s) == s; }

std::vector<TokenId> idsFromJson(const weirtest::Json& v) {
    std::vector<TokenId> ids;
    for (const weirtest::Json& x : weirtest::items(v)) ids.push_back(TokenId(weirtest::integer(x)));
    return ids;
}

std::string showIds(const std::vector<TokenId>& ids) {
    std::string out = "[";
    for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
    return out + "]";
}

// The lines of a file's text, split at '\n' (a trailing newline gives a last empty line).
std::vector<std::string> splitLines(const std::string& text, char separator = '\n') {
    std::vector<std::string> parts(1);
    for (char c : text) {
        if (c == separator) parts.emplace_back();
        else parts.back() += c;
    }
    return parts;
}

// A tiny SentencePiece vocabulary: the usual three specials, 256 byte tokens,
// then pieces with scores chosen so the merge order is known.
Vocabulary smallSpm() {
    Vocabulary v;
    v.model = "llama";
    auto add = [&](const std::string& text, float score, TokenType type) {
        v.tokens.push_back(text);
        v.scores.push_back(score);
        v.types.push_back(type);
        return TokenId(v.tokens.size() - 1);
    };
    add("<unk>", 0, TokenType::Unknown);       // 0
    add("<s>", 0, TokenType::Control);         // 1
    add("</s>", 0, TokenType::Control);        // 2
    for (int b = 0; b < 256; ++b) {            // 3..258
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        add(name, 0, TokenType::Byte);
    }
    for (const char* c : {"\xE2\x96\x81", "h", "e", "l", "o", "w", "r", "d"}) add(c, -10, TokenType::Normal);  // 259..266
    add("he", -1, TokenType::Normal);          // 267
    add("ll", -2, TokenType::Normal);          // 268
    add("hell", -3, TokenType::Normal);        // 269
    add("hello", -4, TokenType::Normal);       // 270
    add("\xE2\x96\x81w", -5, TokenType::Normal);  // 271 "▁w"
    add("or", -6, TokenType::Normal);          // 272
    add("\xE2\x96\x81wor", -7, TokenType::Normal);  // 273
    add("<ctl>", 0, TokenType::Control);       // 274
    add("<ud>", 0, TokenType::UserDefined);    // 275
    add("<ctl><ud>", 0, TokenType::Control);   // 276 (longer: taken first)
    add("<end_of_turn>", 0, TokenType::Normal);  // 277: forced to Control (end of generation)
    v.bos = 1;
    v.eos = 2;
    v.unk = 0;
    v.addBos = true;
    return v;
}

} // namespace

// Loaded GGUF tokenizers, by reference name (nullptr if the file is absent).
std::map<std::string, std::unique_ptr<Tokenizer>> tokenizers_;
std::vector<std::string> corpus_;

Tokenizer* load(const std::string& name) {
    auto it = tokenizers_.find(name);
    if (it != tokenizers_.end()) return it->second.get();
    std::unique_ptr<Tokenizer> tok;
    const std::string path = vocabPath(name);
    if (!path.empty() && std::filesystem::exists(path)) {
        const auto start = std::chrono::steady_clock::now();
        auto elapsedMs = [&] {
            return (long long)std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
        };
        auto file = weir::gguf::GgufFile::open(path);
        const long long openMs = elapsedMs();
        Vocabulary v = Vocabulary::fromGguf(*file);
        if (name == "gpt-2-default") v.pre = "default";
        tok = Tokenizer::fromVocabulary(std::move(v));
        std::printf("  %s: %d tokens; GGUF parsed in %lld ms, tokenizer built in %lld ms\n", name.c_str(),
              tok->vocabSize(), openMs, elapsedMs() - openMs);
    }
    return (tokenizers_[name] = std::move(tok)).get();
}

static std::vector<std::string> referenceNames() {
    return {"gemma3", "llama-bpe", "qwen2", "gpt-2", "gpt-2-default", "llama-spm"};
}
struct VocabRow {
    std::string name;
    std::string vocab;
};

static std::vector<VocabRow> vocabRows() {
    std::vector<VocabRow> rows;
    for (const std::string& n : referenceNames()) rows.push_back({n, n});
    return rows;
}

WEIR_TEST_SUITE_SETUP(Tokenizer) {
    const std::string path = dataDir() + "/corpus.json";
    const auto text = weirtest::readFile(path);
    REQUIRE_MSG(text.has_value(), "missing " + path);
    const weirtest::Json corpus = weirtest::parseJsonOrUndefined(*text);
    for (const weirtest::Json& v : weirtest::items(corpus)) corpus_.push_back(weirtest::text(v));
    REQUIRE(corpus_.size() >= 220);
}

// --- hand-made vocabularies ---------------------------------------------

WEIR_TEST(Tokenizer, spmMergesByScore) {
    auto tok = Tokenizer::fromVocabulary(smallSpm());
    // "hello": he(-1) first, then ll(-2), then hell(-3), then hello(-4).
    REQUIRE_EQ(tok->encode("hello", false, false), (std::vector<TokenId>{270}));
    // " world": "▁w"(-5) and "or"(-6) merge, "▁wor"(-7) joins them; l, d stay.
    REQUIRE_EQ(tok->encode(" world", false, false), (std::vector<TokenId>{273, 262, 266}));
    REQUIRE_EQ(tok->encode("hello", true, false), (std::vector<TokenId>{1, 270}));
    REQUIRE_EQ(tok->encode("", true, false), (std::vector<TokenId>{1}));
    REQUIRE_EQ(tok->encode("", false, false), (std::vector<TokenId>{}));
}

WEIR_TEST(Tokenizer, spmByteFallback) {
    auto tok = Tokenizer::fromVocabulary(smallSpm());
    // "é" is not a piece: its two UTF-8 bytes become <0xC3> <0xA9>.
    REQUIRE_EQ(tok->encode("h\xC3\xA9", false, false), (std::vector<TokenId>{260, 3 + 0xC3, 3 + 0xA9}));
    REQUIRE_EQ(tok->decode(tok->encode("h\xC3\xA9", false, false)), std::string("h\xC3\xA9"));
    REQUIRE_EQ(tok->tokenBytes(3 + 0x41), std::string("A"));
    REQUIRE_EQ(tok->tokenBytes(259), std::string(" "));
}

WEIR_TEST(Tokenizer, spmAddSpacePrefix) {
    Vocabulary v = smallSpm();
    v.addSpacePrefix = true;
    auto tok = Tokenizer::fromVocabulary(std::move(v));
    // "world" is tokenized as " world"; after a special token the prefix comes back.
    REQUIRE_EQ(tok->encode("world", false, false), (std::vector<TokenId>{273, 262, 266}));
    REQUIRE_EQ(tok->encode("<ud>world", false, false), (std::vector<TokenId>{275, 273, 262, 266}));
    REQUIRE_EQ(tok->decode(tok->encode("world", true, false)), std::string("world"));
    REQUIRE_EQ(tok->decode(tok->encode(" world", true, false)), std::string(" world"));
}

WEIR_TEST(Tokenizer, specialTokensOnlyWhenAsked) {
    auto tok = Tokenizer::fromVocabulary(smallSpm());
    const std::vector<TokenId> plain = tok->encode("<ctl>", false, false);
    REQUIRE(std::find(plain.begin(), plain.end(), 274) == plain.end());
    REQUIRE(!plain.empty());
    REQUIRE_EQ(tok->decode(plain), std::string("<ctl>"));
    REQUIRE_EQ(tok->encode("<ctl>", false, true), (std::vector<TokenId>{274}));
    // User-defined tokens match even in user text.
    REQUIRE_EQ(tok->encode("<ud>", false, false), (std::vector<TokenId>{275}));
    // Longest first: "<ctl><ud>" wins over "<ctl>" + "<ud>".
    REQUIRE_EQ(tok->encode("<ctl><ud><ud>", false, true), (std::vector<TokenId>{276, 275}));
    REQUIRE_EQ(tok->encode("he<ud>he", false, false), (std::vector<TokenId>{267, 275, 267}));
    // Control tokens are hidden unless asked for.
    REQUIRE_EQ(tok->tokenBytes(274), std::string());
    REQUIRE_EQ(tok->tokenBytes(274, true), std::string("<ctl>"));
    REQUIRE_EQ(tok->tokenBytes(275), std::string("<ud>"));
    REQUIRE(tok->isControl(1));
    REQUIRE(tok->isControl(0));
    REQUIRE(!tok->isControl(275));
    REQUIRE(!tok->isControl(270));
}

// Gemma's <start_of_image> is typed user-defined like its HTML tags, but it
// stands for an image: hidden in output unless asked for, as Hugging Face's
// special tokens are, while it still tokenizes as before.
WEIR_TEST(Tokenizer, mediaMarkersAreNotText) {
    Vocabulary v = smallSpm();
    const TokenId image = TokenId(v.tokens.size());
    v.tokens.push_back("<start_of_image>");
    v.types.push_back(TokenType::UserDefined);
    if (!v.scores.empty()) v.scores.push_back(0);
    auto tok = Tokenizer::fromVocabulary(std::move(v));
    REQUIRE_EQ(tok->encode("<start_of_image>", false, false), (std::vector<TokenId>{image}));
    REQUIRE_EQ(tok->tokenBytes(image), std::string());
    REQUIRE_EQ(tok->tokenBytes(image, true), std::string("<start_of_image>"));
    REQUIRE_EQ(tok->tokenBytes(275), std::string("<ud>"));  // other user-defined tokens are text
    REQUIRE_EQ(tok->decode({270, image, 270}), std::string("hellohello"));
    weir::StreamingDetokenizer plain(*tok), shown(*tok, true);
    REQUIRE_EQ(plain.push(image) + plain.push(270), std::string("hello"));
    REQUIRE_EQ(shown.push(image) + shown.push(270), std::string("<start_of_image>hello"));
    REQUIRE(!tok->isControl(image));
}

WEIR_TEST(Tokenizer, endOfGenerationByName) {
    auto tok = Tokenizer::fromVocabulary(smallSpm());
    REQUIRE_EQ(tok->endOfGeneration(), (std::vector<TokenId>{2, 277}));
    REQUIRE(tok->isEndOfGeneration(2));
    REQUIRE(tok->isEndOfGeneration(277));
    REQUIRE(!tok->isEndOfGeneration(1));
    // Forced to Control: user text cannot produce it.
    REQUIRE(tok->isControl(277));
    const auto ids = tok->encode("<end_of_turn>", false, false);
    REQUIRE(std::find(ids.begin(), ids.end(), 277) == ids.end());
    REQUIRE_EQ(tok->encode("<end_of_turn>", false, true), (std::vector<TokenId>{277}));
}

WEIR_TEST(Tokenizer, bpeMergesByRank) {
    // Byte-level alphabet for "a", "b", "c", " " (Ġ = U+0120 stands for the space byte).
    Vocabulary v;
    v.model = "gpt2";
    v.pre = "gpt-2";
    v.tokens = {"a", "b", "c", "\xC4\xA0", "ab", "bc", "abc", "\xC4\xA0" "a"};
    v.merges = {"b c", "a b", "a bc", "\xC4\xA0 a"};
    auto tok = Tokenizer::fromVocabulary(v);
    // "abc": "b c" has the better rank, then "a bc".
    REQUIRE_EQ(tok->encode("abc", false, false), (std::vector<TokenId>{6}));
    // "abab": words are not split; "a b" twice.
    REQUIRE_EQ(tok->encode("abab", false, false), (std::vector<TokenId>{4, 4}));
    // " a" is one word (GPT-2 regex: optional space + letters), then "Ġa".
    REQUIRE_EQ(tok->encode("c a", false, false), (std::vector<TokenId>{2, 7}));
    REQUIRE_EQ(tok->decode({2, 7}), std::string("c a"));
    // Without "ignore merges", a word that is a token still goes through merges:
    v.tokens.push_back("ac");  // 8: never produced, no merge makes it
    auto tok2 = Tokenizer::fromVocabulary(v);
    REQUIRE_EQ(tok2->encode("ac", false, false), (std::vector<TokenId>{0, 2}));
    // ... while the Llama 3 pre-tokenizer takes a whole-word token directly.
    v.pre = "llama-bpe";
    auto tok3 = Tokenizer::fromVocabulary(v);
    REQUIRE_EQ(tok3->encode("ac", false, false), (std::vector<TokenId>{8}));
}

WEIR_TEST(Tokenizer, badVocabulariesAreErrors) {
    Vocabulary v = smallSpm();
    v.model = "bert";
    REQUIRE_THROWS(weir::Error, Tokenizer::fromVocabulary(v));
    v = smallSpm();
    v.types.pop_back();
    REQUIRE_THROWS(weir::Error, Tokenizer::fromVocabulary(v));
    v = smallSpm();
    v.tokens.clear();
    v.types.clear();
    v.scores.clear();
    REQUIRE_THROWS(weir::Error, Tokenizer::fromVocabulary(v));
    Vocabulary b;
    b.model = "gpt2";
    b.pre = "some-future-regex";
    b.tokens = {"a"};
    try {
        Tokenizer::fromVocabulary(b);
        FAIL("an unknown pre-tokenizer must be an error");
    } catch (const weir::Error& e) {
        REQUIRE(weirtest::contains(e.what(), "some-future-regex"));
    }
}

struct PreTokenizerSplitsRow {
    std::string name;
    std::string pre;
    std::string text;
    std::vector<std::string> words;
};

static std::vector<PreTokenizerSplitsRow> preTokenizerSplitsRows() {
    std::vector<PreTokenizerSplitsRow> rows;
    // Expected splits written from the regexes in pretokenizer.h.
    rows.push_back({"llama3 words", "llama-bpe", "Hello world", std::vector<std::string>{"Hello", " world"}});
    rows.push_back({"llama3 digits", "llama-bpe", "1234567", std::vector<std::string>{"123", "456", "7"}});
    rows.push_back({"llama3 contraction", "llama-bpe", "I'M ok", std::vector<std::string>{"I", "'M", " ok"}});
    rows.push_back({"llama3 spaces", "llama-bpe", "a   b", std::vector<std::string>{"a", "  ", " b"}});
    rows.push_back({"llama3 newlines", "llama-bpe", "a \n\n b", std::vector<std::string>{"a", " \n\n", " b"}});
    rows.push_back({"llama3 punct", "llama-bpe", "x ...\n!", std::vector<std::string>{"x", " ...\n", "!"}});
    rows.push_back({"llama3 trailing", "llama-bpe", "a  ", std::vector<std::string>{"a", "  "}});
    rows.push_back({"qwen2 digits", "qwen2", "x123", std::vector<std::string>{"x", "1", "2", "3"}});
    rows.push_back({"gpt2 digits", "gpt-2", "ab 123 cd", std::vector<std::string>{"ab", " 123", " cd"}});
    rows.push_back({"gpt2 spaces", "gpt-2", "a  b", std::vector<std::string>{"a", " ", " b"}});
    rows.push_back({"gpt2 case", "gpt-2", "I'M", std::vector<std::string>{"I", "'", "M"}});
    rows.push_back({"default chain", "default", "ab 12345+=c", std::vector<std::string>{"ab", " ", "123", "45", "+=", "c"}});
    rows.push_back({"unicode letters", "llama-bpe", std::string("naïve 東京"), std::vector<std::string>{std::string("naïve"), std::string(" 東京")}});
    return rows;
}
WEIR_TEST(Tokenizer, preTokenizerSplits) {
    weirtest::eachRow(preTokenizerSplitsRows(), [&](const PreTokenizerSplitsRow& row) {
        const std::string& pre = row.pre;
        const std::string& text = row.text;
        const std::vector<std::string>& words = row.words;
        const std::string utf8 = text;
        const std::vector<uint32_t> cps = weir::tok::decodeUtf8(utf8);
        std::vector<uint32_t> lengths;
        weir::tok::preTokenize(weir::tok::preTokenizerFromName(pre), cps, lengths);
        std::vector<std::string> got;
        size_t start = 0;
        for (uint32_t len : lengths) {
            std::string w;
            for (size_t i = start; i < start + len; ++i) weir::tok::appendUtf8(w, cps[i]);
            got.push_back(w);
            start += len;
        }
        REQUIRE_EQ(got, words);
    });
}

WEIR_TEST(Tokenizer, utf8Helpers) {
    using weir::tok::sanitizeUtf8;
    REQUIRE_EQ(sanitizeUtf8("abc"), std::string("abc"));
    REQUIRE_EQ(sanitizeUtf8("a\xFF" "b"), std::string("a\xEF\xBF\xBD" "b"));
    REQUIRE_EQ(sanitizeUtf8("\xC0\x80"), std::string("\xEF\xBF\xBD\xEF\xBF\xBD"));   // overlong
    REQUIRE_EQ(sanitizeUtf8("\xED\xA0\x80"), std::string("\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"));  // surrogate
    REQUIRE_EQ(sanitizeUtf8("\xF0\x9F\x98"), std::string("\xEF\xBF\xBD"));  // cut off: one U+FFFD
    REQUIRE_EQ(sanitizeUtf8("\xE4\xB8" "a"), std::string("\xEF\xBF\xBD" "a"));
    std::string out;
    REQUIRE_EQ(weir::tok::takeCompleteUtf8("ab\xF0\x9F", out), size_t(2));
    REQUIRE_EQ(out, std::string("ab"));
}

WEIR_TEST(Tokenizer, streamingOnHandMadeBytes) {
    auto tok = Tokenizer::fromVocabulary(smallSpm());
    const std::string text = "h\xF0\x9F\x98\x80\xE4\xB8\xAD";  // "h😀中"
    weir::StreamingDetokenizer stream(*tok);
    std::string all;
    std::vector<std::string> outputs;
    for (TokenId id : tok->encode(text, false, false)) {
        outputs.push_back(stream.push(id));
        all += outputs.back();
    }
    all += stream.flush();
    REQUIRE_EQ(all, text);
    // The emoji's first three bytes give nothing; its fourth gives all of it.
    REQUIRE_EQ(outputs.size(), size_t(8));
    REQUIRE_EQ(outputs[1], std::string());
    REQUIRE_EQ(outputs[3], std::string());
    REQUIRE_EQ(outputs[4], std::string("\xF0\x9F\x98\x80"));
    // A sequence that cannot complete becomes U+FFFD once that is certain,
    // an incomplete tail at flush too.
    weir::StreamingDetokenizer bad(*tok);
    REQUIRE_EQ(bad.push(3 + 0xE4), std::string());
    REQUIRE_EQ(bad.push(3 + 0x41), std::string("\xEF\xBF\xBD" "A"));
    REQUIRE_EQ(bad.push(3 + 0xF0), std::string());
    REQUIRE_EQ(bad.flush(), std::string("\xEF\xBF\xBD"));
}

// --- real vocabularies against llama.cpp -----------------------------------

WEIR_TEST(Tokenizer, idsMatchLlamaCpp) {
    weirtest::eachRow(vocabRows(), [&](const VocabRow& row) {
        const std::string& vocab = row.vocab;
        const std::string refPath = dataDir() + "/" + vocab + ".json";
        const auto refText = weirtest::readFile(refPath);
        REQUIRE_MSG(refText.has_value(), "missing " + refPath);
        const weirtest::Json ref = weirtest::parseJsonOrUndefined(*refText);
        Tokenizer* tok = load(vocab);
        if (!tok) SKIP("vocabulary not found: " + vocabPath(vocab) + " (packaging/setup.sh extracts it)");

        int checked = 0, matched = 0;
        std::vector<std::string> failures;
        auto check = [&](const std::string& what, const std::string& text, bool addBos, bool special,
                         const std::vector<TokenId>& expected) {
            const std::vector<TokenId> got = tok->encode(text, addBos, special);
            ++checked;
            if (got == expected) {
                ++matched;
            } else if (failures.size() < 8) {
                failures.push_back(vocab + " " + what + ": text " + weirtest::Json(text).toJson() + "\n  llama.cpp " +
                                   showIds(expected) + "\n  weir      " + showIds(got));
            }
        };
        const auto& plain = weirtest::items(weirtest::field(ref, "plain"));
        REQUIRE_EQ(plain.size(), corpus_.size());
        for (size_t i = 0; i < corpus_.size(); ++i) check("plain #" + std::to_string(i), corpus_[i], true, false, idsFromJson(plain[i]));
        const weirtest::Json& special = weirtest::field(ref, "special");
        REQUIRE(special.isDict());
        for (const auto& [key, ids] : special.asDict().entries)
            check("special #" + key, corpus_.at(std::stoul(key)), true, true, idsFromJson(ids));
        const weirtest::Json& noBos = weirtest::field(ref, "no_bos");
        REQUIRE(noBos.isDict());
        for (const auto& [key, ids] : noBos.asDict().entries)
            check("no_bos #" + key, corpus_.at(std::stoul(key)), false, false, idsFromJson(ids));
        const auto longText = weirtest::readFile(dataDir() + "/long_text.txt");
        REQUIRE(longText.has_value());
        check("long text", *longText, true, false, idsFromJson(weirtest::field(ref, "long")));

        std::printf("  %s: %d of %d encodings identical to llama.cpp (%d corpus strings, %d with special parsing, %d without BOS, 1 long text)\n",
              vocab.c_str(), matched, checked, int(plain.size()), int(special.asDict().entries.size()),
              int(noBos.asDict().entries.size()));
        for (const std::string& s : failures) std::printf("  %s\n", s.c_str());
        REQUIRE_EQ(matched, checked);
    });
}

// llama.cpp's own test strings for these vocabularies, with the ids the
// Hugging Face tokenizers give them (a second, independent reference).
struct IdsMatchHuggingFaceRow {
    std::string name;
    std::string vocab;
};

static std::vector<IdsMatchHuggingFaceRow> idsMatchHuggingFaceRows() {
    std::vector<IdsMatchHuggingFaceRow> rows;
    for (const char* n : {"llama-bpe", "qwen2", "gpt-2", "llama-spm"}) rows.push_back({n, std::string(n)});
    return rows;
}
WEIR_TEST(Tokenizer, idsMatchHuggingFace) {
    weirtest::eachRow(idsMatchHuggingFaceRows(), [&](const IdsMatchHuggingFaceRow& row) {
        const std::string& vocab = row.vocab;
        Tokenizer* tok = load(vocab);
        const auto inp = weirtest::readFile(vocabPath(vocab) + ".inp"), out = weirtest::readFile(vocabPath(vocab) + ".out");
        if (!tok || !inp || !out)
            SKIP("not found: " + vocabPath(vocab) + "{,.inp,.out} (packaging/setup.sh extracts them)");
        std::vector<std::string> texts = splitLines(*inp);
        // Strings are separated by lines "__ggml_vocab_test__"; rejoin the lines of each.
        std::vector<std::string> cases;
        std::string current;
        bool first = true;
        for (const std::string& line : texts) {
            if (line == "__ggml_vocab_test__") {
                cases.push_back(current);
                current.clear();
                first = true;
                continue;
            }
            if (!first) current += '\n';
            current += line;
            first = false;
        }
        const std::vector<std::string> lines = splitLines(*out);
        REQUIRE(lines.size() >= cases.size());
        int matched = 0;
        for (size_t i = 0; i < cases.size(); ++i) {
            std::vector<TokenId> expected;
            for (const std::string& x : splitLines(lines[i], ' '))
                if (!x.empty()) expected.push_back(TokenId(std::stol(x)));
            const auto got = tok->encode(cases[i], false, false);
            if (got == expected) ++matched;
            else std::printf("  %s #%zu: expected %s got %s\n", vocab.c_str(), i, showIds(expected).c_str(), showIds(got).c_str());
        }
        std::printf("  %s: %d of %d match Hugging Face tokenizers\n", vocab.c_str(), matched, int(cases.size()));
        REQUIRE(cases.size() > 20);
        REQUIRE_EQ(matched, int(cases.size()));
    });
}

// User text never yields a control token; with parseSpecial it does.
WEIR_TEST(Tokenizer, controlTokensNeedParseSpecial) {
    weirtest::eachRow(vocabRows(), [&](const VocabRow& row) {
        const std::string& vocab = row.vocab;
        Tokenizer* tok = load(vocab);
        if (!tok) SKIP("vocabulary not found: " + vocabPath(vocab));
        for (const std::string& s : corpus_) {
            const std::vector<TokenId> ids = tok->encode(s, false, false);
            for (TokenId id : ids)
                REQUIRE_MSG(!tok->isControl(id), weirtest::str("control token ", id, " from user text ", s));
        }
        // Each vocabulary's own turn markers, written in the text.
        for (const char* name : {"<start_of_turn>", "<end_of_turn>", "<|im_end|>", "<|eot_id|>", "<|begin_of_text|>", "<|endoftext|>"}) {
            const TokenId id = tok->find(name);
            if (id < 0 || !tok->isControl(id)) continue;
            const std::string text = std::string("x") + name + "user";
            const auto plain = tok->encode(text, false, false);
            REQUIRE(std::find(plain.begin(), plain.end(), id) == plain.end());
            REQUIRE_EQ(tok->decode(plain), text);
            const auto special = tok->encode(text, false, true);
            REQUIRE_MSG(std::find(special.begin(), special.end(), id) != special.end(), name);
        }
    });
}

WEIR_TEST(Tokenizer, roundTrip) {
    weirtest::eachRow(vocabRows(), [&](const VocabRow& row) {
        const std::string& vocab = row.vocab;
        Tokenizer* tok = load(vocab);
        if (!tok) SKIP("vocabulary not found: " + vocabPath(vocab));
        const bool sentencePiece = vocab == "gemma3" || vocab == "llama-spm";
        int n = 0;
        for (const std::string& s : corpus_) {
            // SentencePiece writes spaces as U+2581, so a U+2581 in the input
            // comes back as a space: the one text that cannot round-trip.
            if (sentencePiece && weirtest::contains(s, "\xE2\x96\x81")) continue;  // U+2581 in UTF-8
            // Gemma's media markers ("[multimodal]", "<start_of_image>") match
            // in user text but are not text in output (mediaMarkersAreNotText).
            if (vocab == "gemma3" && (s == "[multimodal]" || s == "<start_of_image>")) continue;
            const std::string text = s;
            for (bool bos : {false, true}) {
                REQUIRE_EQ(tok->decode(tok->encode(text, bos, false)), text);
                ++n;
            }
        }
        std::printf("  %s: %d round trips\n", vocab.c_str(), n);
    });
}

// Streams every corpus string token by token: each piece is valid UTF-8
// and the pieces add up to the text. Then emoji and CJK forced through
// byte tokens (SentencePiece vocabularies have <0xNN> tokens).
WEIR_TEST(Tokenizer, streamingDetokenizer) {
    weirtest::eachRow(vocabRows(), [&](const VocabRow& row) {
        const std::string& vocab = row.vocab;
        Tokenizer* tok = load(vocab);
        if (!tok) SKIP("vocabulary not found: " + vocabPath(vocab));
        int splitChars = 0;
        for (const std::string& s : corpus_) {
            const std::string text = s;
            const std::vector<TokenId> ids = tok->encode(text, false, false);
            std::string expected;
            for (TokenId id : ids) expected += tok->tokenBytes(id);
            weir::StreamingDetokenizer stream(*tok);
            std::string all;
            for (TokenId id : ids) {
                const std::string piece = stream.push(id);
                REQUIRE_MSG(validUtf8(piece), s);
                if (tok->tokenBytes(id) != piece) ++splitChars;
                all += piece;
            }
            all += stream.flush();
            REQUIRE_EQ(all, expected);
        }
        std::printf("  %s: %d tokens held back part of a character\n", vocab.c_str(), splitChars);

        std::vector<TokenId> bytes;
        const std::string text = "\xF0\x9F\x98\x80 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9";
        for (unsigned char c : text) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", c);
            bytes.push_back(tok->find(name));
        }
        if (bytes.front() < 0) return;  // byte-level BPE: no <0xNN> tokens
        weir::StreamingDetokenizer stream(*tok);
        std::string all;
        for (TokenId id : bytes) {
            const std::string piece = stream.push(id);
            REQUIRE(validUtf8(piece));
            all += piece;
        }
        all += stream.flush();
        REQUIRE_EQ(all, text);
    });
}

// Arbitrary bytes (mostly invalid UTF-8) must never crash and give only
// valid ids; streamed output is always valid UTF-8.
WEIR_TEST(Tokenizer, arbitraryBytes) {
    weirtest::eachRow(vocabRows(), [&](const VocabRow& row) {
        const std::string& vocab = row.vocab;
        Tokenizer* tok = load(vocab);
        if (!tok) SKIP("vocabulary not found: " + vocabPath(vocab));
        const bool sentencePiece = vocab == "gemma3" || vocab == "llama-spm";
        uint64_t state = 0x9E3779B97F4A7C15ull;
        auto next = [&] {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            return state;
        };
        const std::string alphabet = "ab <>|_\n\t\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\x80\xBF\xFF\xC0\xED\xA0";
        for (int i = 0; i < 300; ++i) {
            std::string text;
            const size_t len = next() % 48;
            for (size_t j = 0; j < len; ++j)
                text += (next() & 1) ? char(next() & 0xFF) : alphabet[next() % alphabet.size()];
            if (sentencePiece && text.find("\xE2\x96\x81") != std::string::npos) continue;
            for (bool special : {false, true}) {
                const std::vector<TokenId> ids = tok->encode(text, true, special);
                for (TokenId id : ids) REQUIRE(id >= 0 && id < tok->vocabSize());
                // Lossless for valid UTF-8. (Not for broken input: a cut-off
                // sequence followed by a space swallows the bytes of its U+2581,
                // which then come back as bytes, as in llama.cpp.)
                const std::string valid = weir::tok::sanitizeUtf8(text);
                if (sentencePiece && !special) REQUIRE_EQ(tok->decode(tok->encode(valid, true, false)), valid);
                weir::StreamingDetokenizer stream(*tok);
                for (TokenId id : ids) REQUIRE(validUtf8(stream.push(id)));
                REQUIRE(validUtf8(stream.flush()));
            }
        }
    });
}

WEIR_TEST(Tokenizer, endOfGenerationSets) {
    struct Case { const char* vocab; std::vector<const char*> names; };
    const Case cases[] = {
        // "</s>" (an HTML tag in Gemma's vocabulary) is on llama.cpp's list too.
        {"gemma3", {"<eos>", "<end_of_turn>", "</s>"}},
        {"llama-bpe", {"<|end_of_text|>", "<|eot_id|>"}},
        {"qwen2", {"<|endoftext|>", "<|im_end|>", "</s>"}},
    };
    int seen = 0;
    for (const Case& c : cases) {
        Tokenizer* tok = load(c.vocab);
        if (!tok) continue;
        ++seen;
        std::vector<TokenId> expected;
        for (const char* n : c.names) expected.push_back(tok->find(n));
        std::sort(expected.begin(), expected.end());
        REQUIRE_EQ(tok->endOfGeneration(), expected);
    }
    if (seen == 0) SKIP("no GGUF vocabulary found");
    Tokenizer* gemma = load("gemma3");
    if (gemma) {
        REQUIRE_EQ(gemma->bos(), TokenId(2));
        REQUIRE_EQ(gemma->eos(), TokenId(1));
        REQUIRE(gemma->addBosDefault());
        REQUIRE_EQ(gemma->vocabSize(), 262144);
        REQUIRE_EQ(gemma->tokenText(2), std::string("<bos>"));
        REQUIRE_EQ(gemma->find("<start_of_turn>"), TokenId(105));
        REQUIRE_EQ(gemma->tokenText(-1), std::string());
        REQUIRE_EQ(gemma->tokenBytes(1 << 30), std::string());
    }
}

// Speed of a whole long prompt (no assertion on time: it is reported).
WEIR_TEST(Tokenizer, encodeSpeed) {
    weirtest::eachRow(vocabRows(), [&](const VocabRow& row) {
        const std::string& vocab = row.vocab;
        Tokenizer* tok = load(vocab);
        if (!tok) SKIP("vocabulary not found: " + vocabPath(vocab));
        const auto file = weirtest::readFile(dataDir() + "/long_text.txt");
        REQUIRE(file.has_value());
        const std::string& text = *file;
        size_t n = tok->encode(text, true, false).size();  // warm-up
        const int reps = 5;
        const auto start = std::chrono::steady_clock::now();
        const std::clock_t cpu0 = std::clock();
        for (int i = 0; i < reps; ++i) n = tok->encode(text, true, false).size();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / reps;
        const double cpuMs = double(std::clock() - cpu0) * 1000.0 / CLOCKS_PER_SEC / reps;
        std::printf("  %s: %zu bytes -> %zu tokens in %.2f ms wall, %.2f ms CPU\n", vocab.c_str(), text.size(), n, ms, cpuMs);
        REQUIRE(n > 1000);
    });
}
