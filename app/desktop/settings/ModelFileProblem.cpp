#include "settings/ModelFileProblem.h"

#include <QCoreApplication>
#include <QRegularExpression>

namespace weir::desktop {

ModelFileProblem describeModelFileProblem(const QString& engineMessage) {
    ModelFileProblem p;
    p.detail = engineMessage;
    // The GGUF reader's refusals are "FILE: offset N: problem"; the model
    // loaders' name a key or a tensor without an offset.
    static const QRegularExpression fileLayout(QStringLiteral(": offset \\d+: "));
    const bool layout = fileLayout.match(engineMessage).hasMatch();
    const auto tr = [](const char* text) { return QCoreApplication::translate("ModelFileProblem", text); };
    if (engineMessage.contains(QStringLiteral("bad magic")))
        p.headline = tr("This file is not a GGUF model.");
    else if (layout && (engineMessage.contains(QStringLiteral("truncated")) || engineMessage.contains(QStringLiteral("cannot fit")) ||
                        engineMessage.contains(QStringLiteral("outside the file"))))
        p.headline = tr("This file is not a complete GGUF model (it may be cut short).");
    else if (layout)
        p.headline = tr("This file is a damaged GGUF model.");
    else if (engineMessage.contains(QStringLiteral("unsupported architecture")))
        p.headline = tr("Weir does not support this model's architecture.");
    else
        p.headline = tr("Weir cannot load this model.");
    return p;
}

} // namespace weir::desktop
