#pragma once
// The app's window icon, from the PNGs of resources/icons embedded at build
// time (no SVG image plugin needed).
#include <QIcon>

namespace weir::desktop {

QIcon appIcon();

} // namespace weir::desktop
