#pragma once
// Checks engine settings against the KV pools' concurrency-aware floors before
// anything is applied: the settings page binds its draft values here and shows
// the floor, each term of it, and the two ways out (use the floor as the pool
// size, or the largest max-running-requests the configured pool can serve).
#include <QObject>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

namespace weir::desktop {

class SizingAdvisor : public QObject {
    Q_OBJECT
    QML_ELEMENT
    // Model geometry (from the loaded model's info).
    Q_PROPERTY(int slidingWindow MEMBER slidingWindow_ NOTIFY inputsChanged)
    Q_PROPERTY(int fullLayers MEMBER fullLayers_ NOTIFY inputsChanged)
    Q_PROPERTY(int slidingLayers MEMBER slidingLayers_ NOTIFY inputsChanged)
    Q_PROPERTY(int kvHeads MEMBER kvHeads_ NOTIFY inputsChanged)
    Q_PROPERTY(int headDim MEMBER headDim_ NOTIFY inputsChanged)
    Q_PROPERTY(int contextLength MEMBER contextLength_ NOTIFY inputsChanged)
    // Engine settings being edited.
    Q_PROPERTY(int maxRunning MEMBER maxRunning_ NOTIFY inputsChanged)
    Q_PROPERTY(int pageSize MEMBER pageSize_ NOTIFY inputsChanged)
    Q_PROPERTY(int prefillChunk MEMBER prefillChunk_ NOTIFY inputsChanged)
    Q_PROPERTY(int chunksInFlight MEMBER chunksInFlight_ NOTIFY inputsChanged)
    Q_PROPERTY(int retainGap MEMBER retainGap_ NOTIFY inputsChanged)
    Q_PROPERTY(int maxContext MEMBER maxContext_ NOTIFY inputsChanged)
    Q_PROPERTY(qint64 windowPoolTokens MEMBER windowPoolTokens_ NOTIFY inputsChanged)  // 0 = automatic
    Q_PROPERTY(qint64 fullPoolTokens MEMBER fullPoolTokens_ NOTIFY inputsChanged)      // 0 = automatic
    Q_PROPERTY(QString kvDtype MEMBER kvDtype_ NOTIFY inputsChanged)                   // "f16", "q8_0", ...
    // Results.
    Q_PROPERTY(bool applicable READ applicable NOTIFY resultsChanged)
    Q_PROPERTY(qint64 windowFloor READ windowFloor NOTIFY resultsChanged)
    Q_PROPERTY(QVariantList windowTerms READ windowTerms NOTIFY resultsChanged)
    Q_PROPERTY(qint64 perRequestTokens READ perRequestTokens NOTIFY resultsChanged)
    Q_PROPERTY(bool windowBelowFloor READ windowBelowFloor NOTIFY resultsChanged)
    Q_PROPERTY(int largestMaxRunning READ largestMaxRunning NOTIFY resultsChanged)
    Q_PROPERTY(qint64 fullFloor READ fullFloor NOTIFY resultsChanged)
    Q_PROPERTY(bool fullBelowFloor READ fullBelowFloor NOTIFY resultsChanged)
    Q_PROPERTY(qint64 effectiveWindowTokens READ effectiveWindowTokens NOTIFY resultsChanged)
    Q_PROPERTY(double windowBytes READ windowBytes NOTIFY resultsChanged)
    Q_PROPERTY(double fullBytesPerToken READ fullBytesPerToken NOTIFY resultsChanged)
    Q_PROPERTY(double windowBytesPerToken READ windowBytesPerToken NOTIFY resultsChanged)

public:
    explicit SizingAdvisor(QObject* parent = nullptr);

    bool applicable() const { return slidingWindow_ > 0 && slidingLayers_ > 0; }
    qint64 windowFloor() const { return windowFloor_; }
    QVariantList windowTerms() const { return windowTerms_; }
    qint64 perRequestTokens() const { return perRequest_; }
    bool windowBelowFloor() const { return applicable() && windowPoolTokens_ > 0 && windowPoolTokens_ < windowFloor_; }
    int largestMaxRunning() const { return largestMaxRunning_; }
    qint64 fullFloor() const { return fullFloor_; }
    bool fullBelowFloor() const { return fullPoolTokens_ > 0 && fullPoolTokens_ < fullFloor_; }
    qint64 effectiveWindowTokens() const { return windowPoolTokens_ > 0 ? windowPoolTokens_ : windowFloor_; }
    double windowBytes() const { return double(effectiveWindowTokens()) * windowBytesPerToken(); }
    double fullBytesPerToken() const;
    double windowBytesPerToken() const;

    // Sets the model geometry from EngineHost::modelInfo.
    Q_INVOKABLE void setModelInfo(const QVariantMap& info);

signals:
    void inputsChanged();
    void resultsChanged();

private:
    void recompute();
    double bytesPerTokenPerLayer() const;

    int slidingWindow_ = 0, fullLayers_ = 0, slidingLayers_ = 0, kvHeads_ = 0, headDim_ = 0, contextLength_ = 0;
    int maxRunning_ = 4, pageSize_ = 16, prefillChunk_ = 512, chunksInFlight_ = 2, retainGap_ = 1, maxContext_ = 0;
    qint64 windowPoolTokens_ = 0, fullPoolTokens_ = 0;
    QString kvDtype_ = QStringLiteral("f16");

    qint64 windowFloor_ = 0, perRequest_ = 0, fullFloor_ = 0;
    int largestMaxRunning_ = 0;
    QVariantList windowTerms_;
};

} // namespace weir::desktop
