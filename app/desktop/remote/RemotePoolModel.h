#pragma once
// The pool monitor for a remote engine: what RemotePoolPoller reads from the
// chosen endpoint, as gauges the monitor draws like the local pools' (KV
// cache in use, running, waiting, prefix-cache hit rate, tokens/s), each
// marked with its source ("vLLM /metrics") and "not exposed" where the
// server does not say; the poller's notes; and whether the conversations the
// user runs at once fit there (RemoteSizing). It polls only while `active`
// (the monitor is on screen) and an endpoint is chosen.
#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>
#include <optional>

#include "RemoteSizing.h"
#include "app/remote/remote_pool_status.h"

namespace weir::remote {
class RemoteChatClient;
class RemotePoolPoller;
struct RemoteEndpoint;
}

namespace weir::desktop {

class RemoteEnginesController;

class RemotePoolModel : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("RemotePoolModel is created by the app")
    // The endpoint shown; "" = the local engine (nothing polled here).
    Q_PROPERTY(QString endpointName READ endpointName WRITE setEndpointName NOTIFY endpointChanged)
    // The monitor is visible: polling runs only while this is true.
    Q_PROPERTY(bool active READ active WRITE setActive NOTIFY pollingChanged)
    Q_PROPERTY(bool polling READ polling NOTIFY pollingChanged)
    Q_PROPERTY(QString serverUrl READ serverUrl NOTIFY endpointChanged)
    Q_PROPERTY(QString model READ model NOTIFY endpointChanged)
    Q_PROPERTY(bool hasData READ hasData NOTIFY updated)
    // Where the numbers come from: "vLLM /metrics", "Ollama /api/ps", ...
    Q_PROPERTY(QString source READ source NOTIFY updated)
    // [{key, label, text, detail ("of 32,768 tokens"), fraction (-1: no bar),
    // exposed, source}] in a fixed order:
    // kvUsage, running, waiting, prefixHitRate, tokensPerSecond.
    Q_PROPERTY(QVariantList gauges READ gauges NOTIFY updated)
    Q_PROPERTY(QStringList notes READ notes NOTIFY updated)
    Q_PROPERTY(QStringList loadedModels READ loadedModels NOTIFY updated)
    // Conversations the user runs at once (the monitor's field; the app
    // starts it at the local engine's max running requests).
    Q_PROPERTY(int conversationsAtOnce READ conversationsAtOnce WRITE setConversationsAtOnce NOTIFY sizingChanged)
    // The model's context length from /v1/models (0 = not listed).
    Q_PROPERTY(qint64 contextLength READ contextLength NOTIFY sizingChanged)
    Q_PROPERTY(QString sizing READ sizing NOTIFY sizingChanged)
    Q_PROPERTY(bool sizingWarns READ sizingWarns NOTIFY sizingChanged)

public:
    explicit RemotePoolModel(RemoteEnginesController* engines, QObject* parent = nullptr);
    ~RemotePoolModel() override;

    QString endpointName() const { return endpointName_; }
    void setEndpointName(const QString& name);
    bool active() const { return active_; }
    void setActive(bool on);
    bool polling() const { return poller_ != nullptr; }
    QString serverUrl() const { return serverUrl_; }
    QString model() const { return model_; }
    bool hasData() const { return status_.has_value(); }
    QString source() const;
    QVariantList gauges() const;
    QStringList notes() const { return status_ ? status_->notes : QStringList(); }
    QStringList loadedModels() const { return status_ ? status_->loadedModels : QStringList(); }
    int conversationsAtOnce() const { return conversations_; }
    void setConversationsAtOnce(int n);
    qint64 contextLength() const { return contextLength_.value_or(0); }
    QString sizing() const { return advice_.text; }
    bool sizingWarns() const { return advice_.warns(); }

    // One reading (the poller's statusRead; tests feed fixtures here).
    void setStatus(const weir::remote::RemotePoolStatus& status);
    void setContextLength(std::optional<qint64> tokens);
    // Seconds between readings while polling (tests shorten it).
    void setIntervalMs(int ms) { intervalMs_ = ms; }

signals:
    void endpointChanged();
    void pollingChanged();
    void updated();
    void sizingChanged();

private:
    void restart();
    void stopPolling();
    void updateSizing();
    void startPolling(const weir::remote::RemoteEndpoint& endpoint);
    void listModels(const weir::remote::RemoteEndpoint& endpoint);

    QPointer<RemoteEnginesController> engines_;
    QString endpointName_, serverUrl_, model_, apiKey_;
    bool active_ = false;
    int intervalMs_ = 2000;
    int conversations_ = 4;
    std::optional<weir::remote::RemotePoolStatus> status_;
    std::optional<qint64> contextLength_;
    RemoteSizingAdvice advice_;
    // Children of this model; replaced ones go with deleteLater, since one
    // may be in the middle of its own signal.
    weir::remote::RemotePoolPoller* poller_ = nullptr;
    weir::remote::RemoteChatClient* modelsClient_ = nullptr;
};

} // namespace weir::desktop
