#include "settings/InstalledModels.h"

#include <QDir>
#include <QFileInfo>
#include <algorithm>
#include <exception>

#include "app/locations/model_locations.h"
#include "settings/BaseModelGuess.h"
#include "settings/ModelCatalogue.h"
#include "settings/ModelFileProblem.h"
#include "weir/model_file.h"

namespace weir::desktop {

InstalledModels::InstalledModels(QObject* parent)
    : QObject(parent), results_(ScanResults::create(common::Keep::Latest, this, [this](ScanResults& done) {
          if (std::optional<QVariantList> models = done.take()) takeResult(std::move(*models));
      })) {
    pool_.setMaxThreadCount(1);
}

InstalledModels::~InstalledModels() { pool_.waitForDone(); }

QVariantMap InstalledModels::summarize(const QString& path) {
    const QFileInfo info(path);
    QVariantMap m{{"path", info.absoluteFilePath()}, {"fileName", info.fileName()}, {"fileBytes", double(info.size())}};
    try {
        const ModelFileSummary s = summarizeModelFile(path.toStdString());
        const ModelConfig& c = s.config;
        QString pattern;  // one letter per layer: S sliding, F full attention
        int sliding = 0;
        for (bool b : c.layerSlides) {
            pattern += b ? u'S' : u'F';
            sliding += b ? 1 : 0;
        }
        const QString name = QString::fromStdString(c.name);
        m["name"] = name.isEmpty() ? info.completeBaseName() : name;
        m["architecture"] = QString::fromStdString(c.architecture);
        m["quantization"] = QString::fromStdString(c.quantization);
        m["parameters"] = double(c.parameterCount);
        m["fileBytes"] = double(s.fileBytes);
        m["contextLength"] = c.nCtxTrain;
        m["layers"] = c.nLayer;
        m["slidingLayers"] = sliding;
        m["slidingWindow"] = c.slidingWindow;
        m["layerPattern"] = pattern;
        m["hasChatTemplate"] = s.hasChatTemplate;
        m["baseModel"] = looksLikeBaseModel(name, info.fileName(), s.hasChatTemplate);
        m["error"] = QString();
    } catch (const std::exception& e) {
        m["name"] = info.completeBaseName();
        const ModelFileProblem problem = describeModelFileProblem(QString::fromUtf8(e.what()));
        m["error"] = problem.headline;
        m["errorDetail"] = problem.detail;
    }
    return m;
}

void InstalledModels::refresh(const QStringList& extraPaths) {
    if (scanning_) {
        rescan_ = true;
        rescanPaths_ = extraPaths;
        return;
    }
    start(extraPaths);
}

void InstalledModels::start(const QStringList& extraPaths) {
    scanning_ = true;
    emit scanningChanged();
    // The catalogue is read here (it is embedded: no file system) so the
    // worker needs nothing from the GUI thread.
    const QVariantList catalogue = bundledModels();
    QStringList folders;
    for (const auto& dir : locations::modelSearchDirs()) folders << QString::fromStdString(dir.string());
    std::shared_ptr<ScanResults> results = results_;
    pool_.start([results, catalogue, folders, extraPaths] {
        QStringList paths;
        for (const QString& folder : folders)
            for (const QFileInfo& f : QDir(folder).entryInfoList({QStringLiteral("*.gguf")}, QDir::Files | QDir::Readable))
                paths << f.absoluteFilePath();
        for (const QString& p : extraPaths)
            if (QFileInfo(p).isFile()) paths << QFileInfo(p).absoluteFilePath();
        paths.removeDuplicates();
        QVariantList result;
        for (const QString& p : paths) {
            QVariantMap m = summarize(p);
            m["catalogueName"] = QString();
            m["role"] = QString();
            for (const QVariant& v : catalogue) {
                const QVariantMap c = v.toMap();
                if (c["file"].toString() != QFileInfo(p).fileName()) continue;
                m["catalogueName"] = c["name"];
                m["role"] = c["role"];
            }
            result << m;
        }
        std::sort(result.begin(), result.end(), [](const QVariant& a, const QVariant& b) {
            return a.toMap()["name"].toString().compare(b.toMap()["name"].toString(), Qt::CaseInsensitive) < 0;
        });
        results->put(std::move(result));
    });
}

void InstalledModels::takeResult(QVariantList models) {
    models_ = std::move(models);
    scanning_ = false;
    emit modelsChanged();
    emit scanningChanged();
    if (rescan_) {
        rescan_ = false;
        start(rescanPaths_);
    }
}

} // namespace weir::desktop
