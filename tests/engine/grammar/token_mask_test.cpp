// Token masks and the per-request matcher: the trie walk gives exactly what
// running each token's bytes through the automaton gives (on a synthetic
// vocabulary full of awkward pieces and on both real vocabularies), tokens
// that split a UTF-8 character or an escape advance correctly, and end
// tokens are allowed only once the document is complete.
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/grammar/compiled_grammar.h"
#include "engine/grammar/grammar_constraint.h"
#include "engine/grammar/json_schema_compiler.h"
#include "engine/grammar/token_mask.h"
#include "engine/grammar/vocabulary_trie.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/engine/grammar/real_models.h"
#include "tests/support/weir_test.h"

using namespace weir;
using namespace weir::grammar;

namespace {

const char* kPersonSchema = R"({"type":"object","properties":{
    "name":{"type":"string"},"age":{"type":"integer"},"score":{"type":"number"},
    "tags":{"type":"array","items":{"enum":["a","b\u00e9"]},"maxItems":3},
    "kind":{"anyOf":[{"type":"null"},{"const":"x"}]}},
    "required":["name","age"],"additionalProperties":false})";

// Documents of kPersonSchema; every prefix of each is a state to compare masks in.
const std::vector<std::string>& personDocuments() {
    static const std::vector<std::string> docs = {
        "{\"name\": \"Z\xc3\xa9 \\\"q\\\" \\u00e9\xf0\x9f\x98\x80\", \"age\": -12, \"score\": -0.5e+10}",
        "{\n  \"name\": \"\",\n  \"age\": 0,\n  \"tags\": [\"a\", \"b\xc3\xa9\"],\n  \"kind\": null\n}",
        "{\"name\":\"x\",\"age\":7,\"kind\":\"x\"}",
    };
    return docs;
}

// Bytes tokens are made of in the synthetic vocabulary: JSON punctuation,
// digits, letters, whitespace runs, pieces of escapes and of UTF-8 characters.
std::vector<std::string> syntheticTokens() {
    std::vector<std::string> t;
    for (int b = 0; b < 256; ++b) t.push_back(std::string(1, char(b)));
    const std::vector<std::string> pieces = {
        "{", "}", "[", "]", "\"", ":", ",", " ", "\n", "  ", "\n  ", "\n    ", "\": ", "\", \"", "\"}", "{\"",
        "name", "age", "score", "tags", "kind", "null", "true", "false", "nul", "tr", "x", "a", "b", "Z",
        "\\", "\\\"", "\\u", "\\u00", "e9", "00e9", "\\n", "\\x", "-", "0", "12", "-0", ".", ".5", "e+", "e+10", "E",
        "\xc3", "\xa9", "\xc3\xa9", "\xa9\"", "b\xc3", "\xf0\x9f", "\x98\x80", "\xf0\x9f\x98\x80", "\xed\xa0\x80",
        "\xc0\xaf", "\x80", "\xff", "\"name\"", "\"age\": ", "\"tags\": [\"", "\", \"age\": ", "], \"kind\": null}",
    };
    std::mt19937 rng(5);
    for (const std::string& p : pieces) t.push_back(p);
    // Random concatenations of two or three pieces, duplicates included.
    for (int i = 0; i < 600; ++i) {
        std::string s;
        const int n = 2 + int(rng() % 2);
        for (int k = 0; k < n; ++k) s += pieces[rng() % pieces.size()];
        t.push_back(s);
    }
    t.push_back("");  // a control token: no bytes
    return t;
}

// Every state along the documents' prefixes: trie walk == token-by-token reference.
void compareAlongDocuments(const std::shared_ptr<const VocabularyTrie>& trie, const char* schema,
                           const std::vector<std::string>& docs) {
    CompiledGrammar g(std::make_shared<const Grammar>(compileJsonSchema(schema)), trie);
    GrammarAutomaton& a = g.automaton();
    std::vector<uint64_t> walked, reference;
    int compared = 0;
    for (const std::string& doc : docs) {
        int32_t s = a.initial();
        for (size_t i = 0; i <= doc.size(); ++i) {
            computeTokenMask(a, *trie, s, walked);
            computeTokenMaskByToken(a, *trie, s, reference);
            REQUIRE_MSG(walked == reference, "masks differ after " + std::to_string(i) + " bytes of: " + doc);
            ++compared;
            if (i == doc.size()) break;
            s = a.next(s, uint8_t(doc[i]));
            REQUIRE_MSG(s != GrammarAutomaton::kDead, "document refused at byte " + std::to_string(i) + ": " + doc);
        }
        CHECK(a.isComplete(s));
    }
    CHECK(compared >= 60);
}

} // namespace

WEIR_TEST(TokenMask, trieWalkMatchesReferenceOnSyntheticVocabulary) {
    auto trie = std::make_shared<const VocabularyTrie>(syntheticTokens());
    compareAlongDocuments(trie, kPersonSchema, personDocuments());
}

WEIR_TEST(TokenMask, maskAllowsWhatTheGrammarAllows) {
    const std::vector<std::string> tokens = {"{", "}", "\"", "a", "\"a\"", "\xc3", "\xa9", "\xc3\xa9", "", "1", "{\"a\":"};
    auto trie = std::make_shared<const VocabularyTrie>(tokens);
    CompiledGrammar g(std::make_shared<const Grammar>(compileJsonSchema(R"({"type":"string"})")), trie);
    std::vector<uint64_t> w;
    computeTokenMask(g.automaton(), *trie, g.automaton().initial(), w);
    // Only a token starting with '"': "\"" and "\"a\"".
    CHECK_EQ(w[0], (uint64_t(1) << 2) | (uint64_t(1) << 4));
}

WEIR_TEST(TokenMask, constraintAdvancesOverSplitCharactersAndEscapes) {
    // Token ids: 0 '"', 1 "\xc3" (half of é), 2 "\xa9\"" (its rest and the closing quote),
    // 3 "x", 4 "\\u00", 5 "e9", 6 "\\", 7 end-of-generation (no bytes), 8 "\xa9".
    const std::vector<std::string> tokens = {"\"", "\xc3", "\xa9\"", "x", "\\u00", "e9", "\\", "", "\xa9"};
    auto trie = std::make_shared<const VocabularyTrie>(tokens);
    auto compiled = std::make_shared<CompiledGrammar>(
        std::make_shared<const Grammar>(compileJsonSchema(R"({"type":"string"})")), trie);

    GrammarConstraint c(compiled, {7});
    CHECK(c.accept(0));
    CHECK(c.accept(1));   // ends mid-character
    CHECK(!c.accept(3));  // 'x' cannot continue a two-byte character
    CHECK(!c.accept(0));
    std::vector<float> logits(tokens.size(), 1.0f);
    REQUIRE(c.maskLogits(logits.data(), int32_t(logits.size())));
    const float never = -std::numeric_limits<float>::infinity();
    // Only continuation bytes: "\xa9\"" and "\xa9".
    CHECK_EQ(logits, (std::vector<float>{never, never, 1.0f, never, never, never, never, never, 1.0f}));
    CHECK(c.accept(2));
    CHECK(c.complete());
    CHECK(c.finished());

    GrammarConstraint e(compiled, {7});
    CHECK(e.accept(0));
    CHECK(e.accept(4));   // \u00 (two hex digits still owed)
    CHECK(!e.accept(0));  // a quote is no hex digit
    CHECK(e.accept(5));
    CHECK(e.accept(6));   // a lone backslash, the escape still open
    CHECK(!e.accept(3));  // \x is no escape
    CHECK(e.accept(0));   // \" is
    CHECK(!e.complete());
    CHECK(!e.accept(7));  // no end before the document is complete
    CHECK(e.accept(0));
    CHECK(e.finished());
}

WEIR_TEST(TokenMask, endTokensOnlyWhenComplete) {
    // A number may go on after it is complete: the end token competes with digits.
    const std::vector<std::string> tokens = {"1", "2", "", "x"};
    auto trie = std::make_shared<const VocabularyTrie>(tokens);
    auto compiled = std::make_shared<CompiledGrammar>(
        std::make_shared<const Grammar>(compileJsonSchema(R"({"type":"integer"})")), trie);
    GrammarConstraint c(compiled, {2});
    const float never = -std::numeric_limits<float>::infinity();
    std::vector<float> logits = {0.5f, 0.25f, 3.0f, 1.0f, 9.0f};  // one id past the vocabulary
    REQUIRE(c.maskLogits(logits.data(), 5));
    CHECK_EQ(logits, (std::vector<float>{0.5f, 0.25f, never, never, never}));
    CHECK(c.accept(0));
    CHECK(c.complete());
    CHECK(!c.finished());
    logits = {0.5f, 0.25f, 3.0f, 1.0f, 9.0f};
    REQUIRE(c.maskLogits(logits.data(), 5));
    CHECK_EQ(logits, (std::vector<float>{0.5f, 0.25f, 3.0f, never, never}));
    CHECK(c.lastMaskWasCached() == false);
    CHECK(c.accept(2));
}

WEIR_TEST(TokenMask, nothingAllowedIsReported) {
    // A vocabulary that cannot write '{' at all.
    auto trie = std::make_shared<const VocabularyTrie>(std::vector<std::string>{"a", "}"});
    auto compiled = std::make_shared<CompiledGrammar>(std::make_shared<const Grammar>(anyJsonObjectGrammar()), trie);
    GrammarConstraint c(compiled, {});
    std::vector<float> logits = {1.0f, 2.0f};
    CHECK(!c.maskLogits(logits.data(), 2));
}

WEIR_TEST(TokenMask, trieWalkMatchesReferenceOnRealVocabularies) {
    int ran = 0;
    for (const auto& model : weir::test::realModels()) {
        if (!std::filesystem::exists(model.path)) continue;
        ++ran;
        const auto file = gguf::GgufFile::open(model.path);
        const auto tok = Tokenizer::fromGguf(*file);
        std::vector<std::string> bytes(size_t(tok->vocabSize()));
        for (int32_t id = 0; id < tok->vocabSize(); ++id)
            if (!tok->isControl(id)) bytes[size_t(id)] = tok->tokenBytes(id, false);
        auto trie = std::make_shared<const VocabularyTrie>(bytes);
        // Every prefix of one document: the whole vocabulary each time.
        compareAlongDocuments(trie, kPersonSchema, {personDocuments()[1]});
        // The tokenizer's own tokens of a document go through the constraint.
        auto compiled = std::make_shared<CompiledGrammar>(
            std::make_shared<const Grammar>(compileJsonSchema(kPersonSchema)), trie);
        GrammarConstraint c(compiled, tok->endOfGeneration());
        for (int32_t id : tok->encode(personDocuments()[0], false, false))
            REQUIRE_MSG(c.accept(id), model.name + ": token " + std::to_string(id) + " refused");
        CHECK(c.finished());
    }
    if (ran == 0) SKIP("no real model in models/");
}
