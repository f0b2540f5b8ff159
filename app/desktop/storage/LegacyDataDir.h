#pragma once
// Weir kept its data in Qt's per-app folder (~/.local/share/Weir/Weir) before
// it followed the XDG layout ($XDG_DATA_HOME/weir). On the first start with
// the new folder, what the old one holds is moved there, so conversations
// and settings are not left behind.
#include <QString>

namespace weir::desktop {

// ~/.local/share/Weir/Weir (under $XDG_DATA_HOME when set)
QString legacyDataDir();
// Moves each entry of `legacyDir` that `dataDir` does not have yet, when
// `dataDir` holds no database; removes `legacyDir` once empty. Returns how
// many entries were moved (0 when there was nothing to do).
int moveLegacyData(const QString& legacyDir, const QString& dataDir);

} // namespace weir::desktop
