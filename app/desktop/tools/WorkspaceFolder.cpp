#include "tools/WorkspaceFolder.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

namespace weir::desktop {
namespace {

bool inside(const QString& canonical, const QString& root) {
    return canonical == root || canonical.startsWith(root.endsWith(u'/') ? root : root + u'/');
}

} // namespace

void WorkspaceFolder::setRoot(const QString& folder) {
    QMutexLocker lock(&mutex_);
    root_ = folder;
}

QString WorkspaceFolder::root() const {
    QMutexLocker lock(&mutex_);
    return root_;
}

WorkspaceFolder::Resolved WorkspaceFolder::resolve(const QString& relative, bool mustExist) const {
    const QString rootPath = root();
    if (rootPath.isEmpty()) return {{}, QStringLiteral("no workspace folder is chosen (pick one on the Tools page)")};
    const QString root = QFileInfo(rootPath).canonicalFilePath();
    if (root.isEmpty()) return {{}, QStringLiteral("the workspace folder %1 does not exist").arg(rootPath)};
    QString rel = relative.trimmed();
    if (rel.isEmpty() || rel == u".") rel = QStringLiteral(".");
    if (QDir::isAbsolutePath(rel) || rel.startsWith(u'~'))
        return {{}, QStringLiteral("'%1' is not a path inside the workspace: give a path relative to it").arg(relative)};
    for (const QString& part : rel.split(QRegularExpression(QStringLiteral("[/\\\\]"))))
        if (part == u"..") return {{}, QStringLiteral("'%1' leaves the workspace ('..' is not allowed)").arg(relative)};
    const QString joined = QDir(root).filePath(rel);
    const QFileInfo info(joined);
    if (info.exists()) {
        const QString canonical = info.canonicalFilePath();
        if (!inside(canonical, root))
            return {{}, QStringLiteral("'%1' leads outside the workspace (through a symlink)").arg(relative)};
        return {canonical, {}};
    }
    if (info.isSymLink()) return {{}, QStringLiteral("'%1' is a symlink to nothing").arg(relative)};
    if (mustExist) return {{}, QStringLiteral("'%1' does not exist in the workspace").arg(relative)};
    const QString folder = QFileInfo(info.absolutePath()).canonicalFilePath();
    if (folder.isEmpty()) return {{}, QStringLiteral("the folder of '%1' does not exist in the workspace").arg(relative)};
    if (!inside(folder, root))
        return {{}, QStringLiteral("'%1' leads outside the workspace (through a symlink)").arg(relative)};
    return {QDir(folder).filePath(info.fileName()), {}};
}

} // namespace weir::desktop
