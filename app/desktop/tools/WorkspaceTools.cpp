#include "tools/WorkspaceTools.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QSaveFile>

namespace weir::desktop {
namespace {

QString relativeTo(const QString& root, const QString& path) {
    return QDir(QFileInfo(root).canonicalFilePath()).relativeFilePath(path);
}

} // namespace

QString ListFilesTool::description() const {
    return QStringLiteral("Lists the files and folders in a folder of the workspace.");
}

QByteArray ListFilesTool::parametersJson() const {
    return R"({"type": "object",
               "properties": {"path": {"type": "string", "description": "a folder relative to the workspace; \".\" for its top"}},
               "additionalProperties": false})";
}

ToolResult ListFilesTool::run(const QJsonObject& arguments) const {
    const auto r = folder_->resolve(arguments.value(u"path").toString(QStringLiteral(".")));
    if (!r.error.isEmpty()) return {false, r.error};
    if (!QFileInfo(r.path).isDir()) return {false, QStringLiteral("'%1' is a file, not a folder").arg(arguments.value(u"path").toString())};
    QStringList lines;
    const QFileInfoList entries = QDir(r.path).entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden,
                                                             QDir::DirsFirst | QDir::Name);
    for (const QFileInfo& e : entries)
        lines << (e.isDir() ? e.fileName() + u'/' : QStringLiteral("%1 (%2 bytes)").arg(e.fileName()).arg(e.size()));
    if (lines.isEmpty()) return {true, QStringLiteral("(empty folder)")};
    return {true, lines.join(u'\n')};
}

QString ReadFileTool::description() const {
    return QStringLiteral("Reads a text file of the workspace.");
}

QByteArray ReadFileTool::parametersJson() const {
    return R"({"type": "object",
               "properties": {"path": {"type": "string", "description": "a file relative to the workspace"}},
               "required": ["path"],
               "additionalProperties": false})";
}

ToolResult ReadFileTool::run(const QJsonObject& arguments) const {
    const QString name = arguments.value(u"path").toString();
    const auto r = folder_->resolve(name);
    if (!r.error.isEmpty()) return {false, r.error};
    QFile f(r.path);
    if (QFileInfo(r.path).isDir()) return {false, QStringLiteral("'%1' is a folder: list it with list_files").arg(name)};
    if (!f.open(QIODevice::ReadOnly)) return {false, QStringLiteral("cannot read '%1': %2").arg(name, f.errorString())};
    const QByteArray bytes = f.read(kWorkspaceReadLimit * 4);
    QString text = QString::fromUtf8(bytes);
    if (text.size() > kWorkspaceReadLimit || f.size() > bytes.size())
        text = text.left(kWorkspaceReadLimit) + QStringLiteral("\n[... cut: the file has %1 bytes]").arg(f.size());
    return {true, text};
}

QString SearchFilesTool::description() const {
    return QStringLiteral("Finds the lines that contain a text in the workspace's files (case-insensitive).");
}

QByteArray SearchFilesTool::parametersJson() const {
    return R"({"type": "object",
               "properties": {"query": {"type": "string", "description": "the text to find"},
                              "path": {"type": "string", "description": "a folder to search in; \".\" for the whole workspace"}},
               "required": ["query"],
               "additionalProperties": false})";
}

ToolResult SearchFilesTool::run(const QJsonObject& arguments) const {
    const QString query = arguments.value(u"query").toString();
    if (query.isEmpty()) return {false, QStringLiteral("the query is empty")};
    const auto r = folder_->resolve(arguments.value(u"path").toString(QStringLiteral(".")));
    if (!r.error.isEmpty()) return {false, r.error};
    QStringList hits;
    constexpr int kMaxHits = 100;
    // No FollowSymlinks: a link out of the workspace is never entered.
    QDirIterator it(r.path, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext() && hits.size() < kMaxHits) {
        const QString path = it.next();
        const QFileInfo info(path);
        if (info.isSymLink() || info.size() > 4 * 1024 * 1024) continue;
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) continue;
        int line = 0;
        while (!f.atEnd() && hits.size() < kMaxHits) {
            const QString text = QString::fromUtf8(f.readLine());
            ++line;
            if (text.contains(query, Qt::CaseInsensitive))
                hits << QStringLiteral("%1:%2: %3").arg(relativeTo(folder_->root(), path)).arg(line).arg(text.trimmed().left(200));
        }
    }
    if (hits.isEmpty()) return {true, QStringLiteral("no line contains '%1'").arg(query)};
    return {true, hits.join(u'\n')};
}

QString WriteFileTool::description() const {
    return QStringLiteral("Writes a text file in the workspace (replacing it if it exists). The user approves every write.");
}

QByteArray WriteFileTool::parametersJson() const {
    return R"({"type": "object",
               "properties": {"path": {"type": "string", "description": "a file relative to the workspace"},
                              "content": {"type": "string", "description": "the file's new text"}},
               "required": ["path", "content"],
               "additionalProperties": false})";
}

ToolResult WriteFileTool::run(const QJsonObject& arguments) const {
    const QString name = arguments.value(u"path").toString();
    const auto r = folder_->resolve(name, false);
    if (!r.error.isEmpty()) return {false, r.error};
    if (QFileInfo(r.path).isDir()) return {false, QStringLiteral("'%1' is a folder").arg(name)};
    QSaveFile f(r.path);
    const QByteArray bytes = arguments.value(u"content").toString().toUtf8();
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
        return {false, QStringLiteral("cannot write '%1': %2").arg(name, f.errorString())};
    return {true, QStringLiteral("wrote %1 bytes to %2").arg(bytes.size()).arg(name)};
}

} // namespace weir::desktop
