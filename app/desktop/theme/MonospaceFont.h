#pragma once
// The family name code is shown in. QML's font.family takes one name, and a
// comma-joined list ("DejaVu Sans Mono, monospace") is not split: it matches
// no family and falls back to the proportional default. So the app resolves
// one installed fixed-pitch family here, once, and QML uses that name.
#include <QString>

namespace weir::desktop {

// The system's fixed font when it resolves to a fixed-pitch face, else the
// first installed family of a short list of common code fonts, else any
// fixed-pitch family installed, else the system fixed font's name as it is.
QString monospaceFamily();

} // namespace weir::desktop
