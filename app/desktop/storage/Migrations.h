#pragma once
// Numbered schema migrations. Migration N takes a database at version N-1 to
// version N; Storage runs each in its own transaction and records the version
// in PRAGMA user_version. Never edit a migration that shipped: add the next.
#include <QSqlDatabase>
#include <QString>

namespace weir::desktop::migrations {

constexpr int kLatest = 9;

// Runs migration `toVersion` on `db` (inside the caller's transaction).
// Returns false with `error` set on failure.
bool migrateTo(QSqlDatabase& db, int toVersion, QString* error);

} // namespace weir::desktop::migrations
