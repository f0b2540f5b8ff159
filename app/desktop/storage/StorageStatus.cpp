#include "storage/StorageStatus.h"

#include <QLocale>

namespace weir::desktop {

void StorageStatus::setCondition(StorageMode mode, StorageProblem problem, const QString& reason,
                                 const QList<StorageBackup>& backups) {
    mode_ = mode == StorageMode::ReadOnly ? ReadOnly : mode == StorageMode::Temporary ? Temporary : ReadWrite;
    problem_ = mode_ == ReadWrite ? StorageProblem::None : problem;
    reason_ = mode_ == ReadWrite ? QString() : reason;
    backups_ = backups;
    emit changed();
}

bool StorageStatus::canRestore() const {
    // Only a damaged file is worth replacing: a write-protected one holds the
    // newest conversations, which the backup copy does not.
    return mode_ != ReadWrite && problem_ == StorageProblem::Damaged && !backups_.isEmpty();
}

QString StorageStatus::backupTime() const {
    return backups_.isEmpty() ? QString() : QLocale().toString(backups_.first().time, QLocale::ShortFormat);
}

QString StorageStatus::problem() const {
    QString text;
    switch (mode_) {
    case ReadWrite: return {};
    case ReadOnly:
        text = problem_ == StorageProblem::Damaged
                   ? tr("Weir's conversation database is damaged (%1). It is open read-only so that nothing more is "
                        "lost: you can read and export conversations, but new messages are not saved.")
                   : tr("Weir's conversation database cannot be written (%1). It is open read-only: you can read and "
                        "export conversations, but new messages are not saved.");
        break;
    case Temporary:
        text = tr("Weir cannot read its conversation database (%1). The file is left as it is. Conversations in "
                  "this session are kept in memory only and are gone when Weir quits.");
        break;
    }
    text = text.arg(reason_);
    if (canRestore())
        text += u' ' + tr("A backup copy from %1 can replace it; the damaged file is kept beside it.").arg(backupTime());
    return text;
}

} // namespace weir::desktop
