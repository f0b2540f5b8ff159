#pragma once
// Every model the user can switch to with one click, for the Model page: the
// GGUF files in the model folders (app/locations), the recent ones that still
// exist and any other paths the caller names, each summarised (name,
// architecture, size, which layers slide, its own chat template or not) by
// weir::summarizeModelFile on a worker thread, so the GUI never reads a file.
#include <QObject>
#include <QtQml/qqmlregistration.h>
#include <QStringList>
#include <QThreadPool>
#include <QVariantList>
#include <memory>

#include "app/common/inbox.h"

namespace weir::desktop {

class InstalledModels : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("InstalledModels comes from App.installedModels")
    // One map per model, sorted by name: path, fileName, name, architecture,
    // quantization, parameters, fileBytes, contextLength, layers,
    // slidingLayers, slidingWindow, layerPattern ("S"/"F" per layer),
    // hasChatTemplate, baseModel (no own template and no -it/instruct/chat in
    // its names), catalogueName and role (from resources/models.json, "" for
    // others), error ("" or why the file cannot be loaded).
    Q_PROPERTY(QVariantList models READ models NOTIFY modelsChanged)
    Q_PROPERTY(bool scanning READ scanning NOTIFY scanningChanged)

public:
    explicit InstalledModels(QObject* parent = nullptr);
    ~InstalledModels() override;  // waits for a scan in progress (reads headers only)

    QVariantList models() const { return models_; }
    bool scanning() const { return scanning_; }

    // Scans the model folders plus `extraPaths` (recent models) again; the
    // result replaces `models` when it is ready. A rescan asked for during a
    // scan runs after it.
    Q_INVOKABLE void refresh(const QStringList& extraPaths = {});

    // The summary of one file as a model map (see `models`); blocking, for
    // the worker and for tests.
    static QVariantMap summarize(const QString& path);

signals:
    void modelsChanged();
    void scanningChanged();

private:
    using ScanResults = common::Inbox<QVariantList>;
    void start(const QStringList& extraPaths);
    void takeResult(QVariantList models);

    // The finished scan, from the worker to the GUI thread.
    std::shared_ptr<ScanResults> results_;
    QThreadPool pool_;
    QVariantList models_;
    bool scanning_ = false;
    bool rescan_ = false;
    QStringList rescanPaths_;
};

} // namespace weir::desktop
