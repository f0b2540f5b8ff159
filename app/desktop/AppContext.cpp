#include "AppContext.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QLocale>
#include <QtGlobal>

#include "app/locations/model_locations.h"
#include "highlight/CodeHighlighter.h"
#include "settings/ModelCatalogue.h"
#include "theme/MonospaceFont.h"

namespace weir::desktop {
namespace {
AppContext* g_instance = nullptr;
}

void AppContext::setInstance(AppContext* context) { g_instance = context; }

AppContext* AppContext::create(QQmlEngine*, QJSEngine*) {
    Q_ASSERT_X(g_instance, "AppContext", "set the instance before loading QML");
    QJSEngine::setObjectOwnership(g_instance, QJSEngine::CppOwnership);
    return g_instance;
}

AppContext::AppContext(const Parts& parts, QObject* parent)
    : QObject(parent), parts_(parts), themeOverride_(qEnvironmentVariable("WEIR_THEME")),
      installedModels_(new InstalledModels(this)) {}

AppContext::~AppContext() {
    if (g_instance == this) g_instance = nullptr;
}

QString AppContext::highlighterName() const { return CodeHighlighter::backendName(); }
QString AppContext::monospaceFamily() const {
    if (monospaceFamily_.isEmpty()) monospaceFamily_ = weir::desktop::monospaceFamily();
    return monospaceFamily_;
}
QString AppContext::version() const { return QStringLiteral(WEIR_VERSION); }
QString AppContext::qtVersion() const { return QString::fromLatin1(qVersion()); }
QString AppContext::startPage() const {
    const QString page = qEnvironmentVariable("WEIR_START_PAGE");
    static const QStringList pages{QStringLiteral("chat"), QStringLiteral("monitor"), QStringLiteral("settings"),
                                   QStringLiteral("model"), QStringLiteral("about"), QStringLiteral("tools")};
    return pages.contains(page) ? page : QStringLiteral("chat");
}

void AppContext::setThemeOverride(const QString& theme) {
    if (theme == themeOverride_) return;
    themeOverride_ = theme;
    emit themeOverrideChanged();
}

void AppContext::loadModel(const QString& path) {
    if (path.isEmpty()) return;
    parts_.settings->addRecentModel(path);
    parts_.engine->setEngineOptions(parts_.settings->engineOptions());
    parts_.engine->load(path);
}

QString AppContext::removeModel(const QString& path) {
    if (path.isEmpty()) return {};
    const QFileInfo file(path);
    if (parts_.engine->modelPath() == file.absoluteFilePath() && parts_.engine->state() != EngineHost::Failed)
        return tr("%1 is the model in use.").arg(file.fileName());
    parts_.settings->removeRecentModel(path);
    bool inModelFolder = false;
    for (const QString& folder : modelFolders())
        if (file.absolutePath() == QFileInfo(folder).absoluteFilePath()) inModelFolder = true;
    if (!inModelFolder || !file.exists()) return {};
    if (!QFile::moveToTrash(file.absoluteFilePath()))
        return tr("Could not move %1 to the trash; remove it from %2 by hand.").arg(file.fileName(), file.absolutePath());
    return {};
}

QString AppContext::applyEngineSettings(const QVariantMap& values) {
    // The page is blocked while the advisor reports a problem; this is the
    // same check for any other caller. Nothing is stored or reloaded then.
    if (const QString bad = parts_.settings->setEngine(values); !bad.isEmpty()) return bad;
    parts_.engine->setEngineOptions(parts_.settings->engineOptions());
    const QString path = parts_.engine->modelPath();
    if (!path.isEmpty()) parts_.engine->load(path);
    return {};
}

QString AppContext::urlToPath(const QUrl& url) const { return url.isLocalFile() ? url.toLocalFile() : url.toString(); }
QUrl AppContext::pathToUrl(const QString& path) const { return QUrl::fromLocalFile(path); }

QString AppContext::dialogFolder(const QString& preferred) const {
    for (const QString& folder : {preferred, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)})
        if (!folder.isEmpty() && QFileInfo(folder).isDir()) return folder;
    return QDir::homePath();
}
QVariantList AppContext::bundledModels() const { return weir::desktop::bundledModels(); }

QStringList AppContext::modelFolders() const {
    QStringList out;
    for (const auto& dir : weir::locations::modelSearchDirs()) out << QString::fromStdString(dir.string());
    return out;
}

bool AppContext::fileExists(const QString& path) const { return QFileInfo::exists(path); }

QString AppContext::formatBytes(double bytes) const {
    return QLocale().formattedDataSize(qint64(bytes), 1, QLocale::DataSizeTraditionalFormat);
}

QString AppContext::formatCount(double n) const {
    if (n >= 1e9) return QString::number(n / 1e9, 'f', 1) + u'B';
    if (n >= 1e6) return QString::number(n / 1e6, 'f', n >= 1e8 ? 0 : 1) + u'M';
    if (n >= 1e4) return QString::number(n / 1e3, 'f', 0) + u'k';
    if (n >= 1e3) return QString::number(n / 1e3, 'f', 1) + u'k';
    return QString::number(qint64(n));
}

QString AppContext::formatNumber(double n) const { return QLocale().toString(qint64(n)); }

} // namespace weir::desktop
