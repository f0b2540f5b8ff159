#pragma once
// How the conversation database opened, for the window: a persistent banner
// when it is read-only (damaged or write-protected) or could not be read at
// all (the app then runs on a temporary database), and the offer to restore
// the newest backup copy when the file is damaged. DesktopApp fills it at
// start-up and does the restoring when asked.
#include <QList>
#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>

#include "storage/Storage.h"

namespace weir::desktop {

class StorageStatus : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("StorageStatus is created by the app")
    Q_PROPERTY(Mode mode READ mode NOTIFY changed)
    // The banner's text: "" while the database is open for writing.
    Q_PROPERTY(QString problem READ problem NOTIFY changed)
    Q_PROPERTY(bool canRestore READ canRestore NOTIFY changed)
    Q_PROPERTY(QString backupTime READ backupTime NOTIFY changed)

public:
    enum Mode { ReadWrite, ReadOnly, Temporary };
    Q_ENUM(Mode)

    using QObject::QObject;

    // `problem` and `reason` say why the read-write open failed (ignored for ReadWrite).
    void setCondition(StorageMode mode, StorageProblem problem, const QString& reason,
                      const QList<StorageBackup>& backups);

    Mode mode() const { return mode_; }
    QString problem() const;
    bool canRestore() const;
    QString backupTime() const;

    // Asks the app to put the newest sound backup copy in place of the damaged file.
    Q_INVOKABLE void restoreBackup() { emit restoreRequested(); }

signals:
    void changed();
    void restoreRequested();
    // A short message for the user (toast); error = true for failures.
    void notice(const QString& text, bool error);

private:
    Mode mode_ = ReadWrite;
    StorageProblem problem_ = StorageProblem::None;
    QString reason_;
    QList<StorageBackup> backups_;
};

} // namespace weir::desktop
