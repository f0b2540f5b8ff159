// Engine::outputConstraintProblem: the schema compiled to a grammar without
// the vocabulary, which is where the engine would refuse it.
#include <exception>

#include "engine/grammar/json_schema_compiler.h"
#include "weir/engine.h"

namespace weir {

std::string Engine::outputConstraintProblem(const OutputConstraint& constraint) {
    if (constraint.kind != OutputConstraint::Kind::JsonSchema) return {};
    try {
        (void)grammar::compileJsonSchema(constraint.schema);
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

} // namespace weir
