// Engine::outputConstraintProblem: the schema compiled to a grammar without
// the vocabulary, which is where the engine would refuse it.
#include <exception>

#include "engine/grammar/constraint_factory.h"
#include "engine/grammar/json_schema_compiler.h"
#include "weir/engine.h"

namespace weir {

std::string Engine::outputConstraintProblem(const OutputConstraint& constraint) {
    if (constraint.lazy()) {
        if (constraint.kind == OutputConstraint::Kind::None) return "a lazy output constraint needs a JSON kind";
        for (const std::string& t : constraint.triggers)
            if (t.empty()) return "a lazy output constraint's trigger is empty";
    }
    if (constraint.kind != OutputConstraint::Kind::JsonSchema) return {};
    try {
        if (constraint.lazy()) (void)grammar::lazyCallGrammar(constraint);
        else (void)grammar::compileJsonSchema(constraint.schema);
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

} // namespace weir
