#pragma once
// The folder the user picked for the workspace file tools, and the one place
// that turns a path the model wrote into a file inside it. A path is refused
// when it is absolute, has a ".." part, or leads outside the folder once every
// symlink is resolved (canonical paths), also for files not written yet
// (their folder is checked). Thread-safe: tools resolve on worker threads
// while the user may change the folder.
#include <QMutex>
#include <QString>

namespace weir::desktop {

class WorkspaceFolder {
public:
    void setRoot(const QString& folder);
    QString root() const;  // "" when none is picked

    struct Resolved {
        QString path;   // absolute, canonical (or canonical folder + name for a new file)
        QString error;  // why the path was refused; path is then empty
    };
    // `mustExist` false: the file may be new, but its folder must exist inside.
    Resolved resolve(const QString& relative, bool mustExist = true) const;

private:
    mutable QMutex mutex_;
    QString root_;
};

} // namespace weir::desktop
