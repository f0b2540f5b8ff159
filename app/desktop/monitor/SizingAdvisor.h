#pragma once
// Checks engine settings against the KV pools' concurrency-aware floors before
// anything is applied. The settings page binds its draft values here; the
// advisor runs the engine's own pool planner (weir::kv::planPools and
// checkPoolPlan) on them, so what it shows is exactly what the engine would
// do: the floor, each term of it, the pool sizes and bytes, the engine's
// refusal message, and the two ways out (the floor as the pool size, or the
// largest max-running-requests the configured pool can serve).
#include <QObject>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include "weir/types/pool_sizing.h"

namespace weir::desktop {

class SizingAdvisor : public QObject {
    Q_OBJECT
    QML_ELEMENT
    // Engine settings being edited (names as in AppSettings::engine()).
    Q_PROPERTY(int threads MEMBER threads_ NOTIFY inputsChanged)                     // 0 = one per physical core
    Q_PROPERTY(int maxRunning MEMBER maxRunning_ NOTIFY inputsChanged)
    Q_PROPERTY(int pageSize MEMBER pageSize_ NOTIFY inputsChanged)
    Q_PROPERTY(int prefillChunk MEMBER prefillChunk_ NOTIFY inputsChanged)
    Q_PROPERTY(int retainGap MEMBER retainGap_ NOTIFY inputsChanged)
    Q_PROPERTY(int maxContext MEMBER maxContext_ NOTIFY inputsChanged)               // 0 = the model's
    Q_PROPERTY(qint64 windowPoolTokens MEMBER windowPoolTokens_ NOTIFY inputsChanged)  // 0 = automatic
    Q_PROPERTY(qint64 fullPoolTokens MEMBER fullPoolTokens_ NOTIFY inputsChanged)      // 0 = automatic
    Q_PROPERTY(QString kvDtype MEMBER kvDtype_ NOTIFY inputsChanged)                   // "f16", "q8_0", ...
    // The memory the pools would live in once applied (the chosen device's
    // free bytes plus what the running engine would give back there; 0 =
    // unknown, nothing checked) and its name for the message.
    Q_PROPERTY(qint64 deviceFreeBytes MEMBER deviceFreeBytes_ NOTIFY inputsChanged)
    Q_PROPERTY(QString deviceLabel MEMBER deviceLabel_ NOTIFY inputsChanged)
    Q_PROPERTY(bool deviceIsGpu MEMBER deviceIsGpu_ NOTIFY inputsChanged)
    // Results.
    Q_PROPERTY(bool hasModel READ hasModel NOTIFY resultsChanged)
    Q_PROPERTY(bool applicable READ applicable NOTIFY resultsChanged)
    Q_PROPERTY(qint64 windowFloor READ windowFloor NOTIFY resultsChanged)
    Q_PROPERTY(QVariantList windowTerms READ windowTerms NOTIFY resultsChanged)
    Q_PROPERTY(qint64 perRequestTokens READ perRequestTokens NOTIFY resultsChanged)
    Q_PROPERTY(int chunksInFlight READ chunksInFlight NOTIFY resultsChanged)
    Q_PROPERTY(bool windowBelowFloor READ windowBelowFloor NOTIFY resultsChanged)
    Q_PROPERTY(int largestMaxRunning READ largestMaxRunning NOTIFY resultsChanged)
    Q_PROPERTY(qint64 fullFloor READ fullFloor NOTIFY resultsChanged)
    Q_PROPERTY(bool fullBelowFloor READ fullBelowFloor NOTIFY resultsChanged)
    Q_PROPERTY(qint64 effectiveFullTokens READ effectiveFullTokens NOTIFY resultsChanged)
    Q_PROPERTY(qint64 effectiveWindowTokens READ effectiveWindowTokens NOTIFY resultsChanged)
    Q_PROPERTY(double fullBytes READ fullBytes NOTIFY resultsChanged)
    Q_PROPERTY(double windowBytes READ windowBytes NOTIFY resultsChanged)
    Q_PROPERTY(double fullBytesPerToken READ fullBytesPerToken NOTIFY resultsChanged)
    Q_PROPERTY(double windowBytesPerToken READ windowBytesPerToken NOTIFY resultsChanged)
    // The engine's refusal, "" if servable: an option out of range
    // (validateEngineOptions, checked with or without a model), else the pool floors.
    Q_PROPERTY(QString problems READ problems NOTIFY resultsChanged)
    // The same refusal in the app's words, one sentence naming the setting as the
    // settings page labels it ("The window pool is too small for 4 conversations
    // at once: it needs at least N tokens"); "" if servable. `problems` stays
    // the details line, with the weir-cli flags.
    Q_PROPERTY(QString refusal READ refusal NOTIFY resultsChanged)
    // The pools do not fit in deviceFreeBytes: what the engine would say at
    // load (numbers and the largest full pool that fits); "" when they fit.
    // An automatic full pool that only fits shrunk is not a problem:
    // shrunkFullTokens then says to what it would shrink (0 = not shrunk).
    Q_PROPERTY(QString memoryProblem READ memoryProblem NOTIFY resultsChanged)
    Q_PROPERTY(qint64 shrunkFullTokens READ shrunkFullTokens NOTIFY resultsChanged)
    // With a memoryProblem: the largest full pool that fits (0: not even its floor).
    Q_PROPERTY(qint64 largestFittingFullPool READ largestFittingFullPool NOTIFY resultsChanged)

public:
    explicit SizingAdvisor(QObject* parent = nullptr);

    bool hasModel() const { return model_.nLayer > 0; }
    bool applicable() const { return hasModel() && plan_.window > 0; }
    qint64 windowFloor() const { return plan_.windowFloor.tokens; }
    QVariantList windowTerms() const { return terms_; }
    qint64 perRequestTokens() const { return plan_.windowFloor.perRequest; }
    int chunksInFlight() const { return plan_.windowInput.chunksInFlight; }
    bool windowBelowFloor() const { return applicable() && plan_.windowTokens < plan_.windowFloor.tokens; }
    int largestMaxRunning() const;
    qint64 fullFloor() const { return plan_.fullFloor; }
    bool fullBelowFloor() const { return hasModel() && plan_.fullTokens < plan_.fullFloor; }
    qint64 effectiveFullTokens() const { return plan_.fullTokens; }
    qint64 effectiveWindowTokens() const { return plan_.windowTokens; }
    double fullBytes() const { return double(plan_.fullBytes()); }
    double windowBytes() const { return double(plan_.windowBytes()); }
    double fullBytesPerToken() const { return double(plan_.fullBytesPerToken); }
    double windowBytesPerToken() const { return double(plan_.windowBytesPerToken); }
    QString problems() const { return problems_; }
    QString refusal() const { return refusal_; }
    QString memoryProblem() const { return memoryProblem_; }
    qint64 shrunkFullTokens() const { return shrunkFullTokens_; }
    qint64 largestFittingFullPool() const { return largestFitting_; }

    // The model geometry, from EngineHost::modelInfo (layers, layerPattern,
    // slidingWindow, kvHeads, headDimK, contextLength).
    Q_INVOKABLE void setModelInfo(const QVariantMap& info);

signals:
    void inputsChanged();
    void resultsChanged();

private:
    void recompute();

    ModelConfig model_;
    int threads_ = 0, maxRunning_ = 4, pageSize_ = 16, prefillChunk_ = 512, retainGap_ = 1, maxContext_ = 0;
    qint64 windowPoolTokens_ = 0, fullPoolTokens_ = 0;
    QString kvDtype_ = QStringLiteral("f16");
    qint64 deviceFreeBytes_ = 0;
    QString deviceLabel_;
    bool deviceIsGpu_ = false;
    QString memoryProblem_;
    qint64 shrunkFullTokens_ = 0;
    qint64 largestFitting_ = 0;

    kv::PoolPlan plan_;
    QVariantList terms_;
    QString problems_, refusal_;
};

} // namespace weir::desktop
