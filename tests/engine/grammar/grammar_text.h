#pragma once
// Runs text through a grammar's automaton, for the grammar tests.
#include <memory>
#include <string_view>

#include "engine/grammar/grammar_automaton.h"
#include "engine/grammar/json_schema_compiler.h"

namespace weir::test {

// Where a text leaves the automaton: Dead (some byte broke it), Prefix (valid
// so far, not a whole document), Complete.
enum class TextFit { Dead, Prefix, Complete };

inline TextFit fit(grammar::GrammarAutomaton& a, std::string_view text) {
    int32_t s = a.initial();
    for (char c : text) {
        s = a.next(s, uint8_t(c));
        if (s == grammar::GrammarAutomaton::kDead) return TextFit::Dead;
    }
    return a.isComplete(s) ? TextFit::Complete : TextFit::Prefix;
}

inline grammar::GrammarAutomaton schemaAutomaton(std::string_view schema) {
    return grammar::GrammarAutomaton(std::make_shared<const grammar::Grammar>(grammar::compileJsonSchema(schema)));
}

} // namespace weir::test
