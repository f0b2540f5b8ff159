#pragma once
// What a model file that cannot be loaded says to a user: a plain sentence
// first ("This file is not a complete GGUF model (it may be cut short)."),
// then the engine's own message ("tensor_count 272 cannot fit in the 976
// bytes left") for whoever wants the detail.
#include <QString>

namespace weir::desktop {

struct ModelFileProblem {
    QString headline;  // one sentence, for the user
    QString detail;    // the engine's message, unchanged
};

ModelFileProblem describeModelFileProblem(const QString& engineMessage);

} // namespace weir::desktop
