// ConstraintFactory: trie once per model, grammars cached by their source.
#include "engine/grammar/constraint_factory.h"

#include <chrono>

#include "engine/grammar/json_schema_compiler.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/vocab_tokenizer.h"
#include "weir/base/error.h"

namespace weir::grammar {

namespace {

// A grammar writes text, not markers: control tokens never, and user-defined
// tokens only when they are whitespace runs (Gemma's "\n\n", "    "), not
// markers such as Gemma's <start_of_image> or [multimodal], which are
// user-defined too but mean something else than their letters.
bool writesText(const Tokenizer& tok, int32_t id, const std::string& bytes) {
    if (tok.isControl(id)) return false;
    const auto* vocab = dynamic_cast<const tok::VocabTokenizer*>(&tok);
    if (!vocab || vocab->tokenType(id) != TokenType::UserDefined) return true;
    return bytes.find_first_not_of(" \t\n\r") == std::string::npos;
}

} // namespace

Grammar lazyCallGrammar(const OutputConstraint& constraint) {
    Grammar g;
    const int32_t document = constraint.kind == OutputConstraint::Kind::JsonObject
                                 ? addAnyJsonObject(g)
                                 : addJsonSchema(g, constraint.schema);
    // call ::= ws1 document more ws1 close ; ws1 ::= "" | " " | "\n"
    // more ::= "" | "\n" document more (at most kMaxDocumentsPerCall
    // documents: several calls in one block, one per line, bounded so that a
    // small model cannot write calls until its budget runs out)
    const int32_t ws = g.addRule("lazy_ws");
    g.addAlternative(ws, {});
    g.addAlternative(ws, literal(" "));
    g.addAlternative(ws, literal("\n"));
    int32_t more = g.addRule("lazy_more0");
    g.addAlternative(more, {});
    for (int k = 1; k < kMaxDocumentsPerCall; ++k) {
        const int32_t r = g.addRule("lazy_more" + std::to_string(k));
        g.addAlternative(r, {});
        g.addAlternative(r, literal("\n") + ruleRef(document) + ruleRef(more));
        more = r;
    }
    const int32_t call = g.addRule("lazy_call");
    g.addAlternative(call, Sequence{ruleRef(ws), ruleRef(document), ruleRef(more), ruleRef(ws)} +
                               literal(constraint.close));
    g.setRoot(call);
    g.elements();  // flattened now, so a broken grammar fails here
    return g;
}

std::shared_ptr<const VocabularyTrie> ConstraintFactory::trie() {
    if (trie_) return trie_;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::string> bytes(size_t(tokenizer_.vocabSize()));
    for (int32_t id = 0; id < tokenizer_.vocabSize(); ++id) {
        std::string b = tokenizer_.tokenBytes(id, false);
        if (writesText(tokenizer_, id, b)) bytes[size_t(id)] = std::move(b);
    }
    trie_ = std::make_shared<const VocabularyTrie>(bytes);
    trieBuildMs_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return trie_;
}

std::shared_ptr<CompiledGrammar> ConstraintFactory::compiled(const OutputConstraint& constraint) {
    std::string key = constraint.kind == OutputConstraint::Kind::JsonObject ? "object:" : "schema:";
    // A lazy call's grammar ends with its closing marker: a key of its own.
    if (constraint.lazy()) key = "lazy:" + std::to_string(constraint.close.size()) + ":" + constraint.close + key;
    if (constraint.kind == OutputConstraint::Kind::JsonSchema) key += constraint.schema;
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
        if (it->first != key) continue;
        if (it->second->automaton().stateCount() > kMaxSharedStates) {
            cache_.erase(it);
            break;
        }
        cache_.splice(cache_.begin(), cache_, it);
        return cache_.front().second;
    }
    auto grammar = std::make_shared<const Grammar>(constraint.lazy() ? lazyCallGrammar(constraint)
                                                   : constraint.kind == OutputConstraint::Kind::JsonObject
                                                       ? anyJsonObjectGrammar()
                                                       : compileJsonSchema(constraint.schema));
    auto c = std::make_shared<CompiledGrammar>(std::move(grammar), trie());
    cache_.emplace_front(std::move(key), c);
    if (cache_.size() > kMaxCachedGrammars) cache_.pop_back();
    return c;
}

std::unique_ptr<GrammarConstraint> ConstraintFactory::make(const OutputConstraint& constraint,
                                                           std::vector<int32_t> endTokens) {
    if (constraint.kind == OutputConstraint::Kind::None) return nullptr;
    if (constraint.lazy()) throw Error("a lazy output constraint (with triggers) is not served here");
    return std::make_unique<GrammarConstraint>(compiled(constraint), std::move(endTokens));
}

std::unique_ptr<LazyConstraint> ConstraintFactory::makeLazy(const OutputConstraint& constraint) {
    if (constraint.kind == OutputConstraint::Kind::None || !constraint.lazy()) return nullptr;
    return std::make_unique<LazyConstraint>(compiled(constraint), constraint.triggers, tokenizer_);
}

} // namespace weir::grammar
