#include "RemotePoolModel.h"

#include <QLocale>

#include "RemoteEnginesController.h"
#include "app/remote/remote_chat_client.h"
#include "app/remote/remote_pool_poller.h"

namespace weir::desktop {

using namespace weir::remote;

namespace {

QString percent(double fraction) { return QStringLiteral("%1%").arg(QLocale().toString(fraction * 100.0, 'f', fraction < 0.1 ? 1 : 0)); }
QString number(qint64 n) { return QLocale().toString(n); }

QVariantMap gauge(const QString& key, const QString& label, bool exposed, const QString& text, double fraction,
                  const QString& source, const QString& detail = {}) {
    return {{QStringLiteral("key"), key},
            {QStringLiteral("label"), label},
            {QStringLiteral("exposed"), exposed},
            {QStringLiteral("text"), exposed ? text : QStringLiteral("not exposed")},
            {QStringLiteral("detail"), exposed ? detail : QString()},
            {QStringLiteral("fraction"), exposed ? fraction : -1.0},
            {QStringLiteral("source"), source}};
}

} // namespace

RemotePoolModel::RemotePoolModel(RemoteEnginesController* engines, QObject* parent) : QObject(parent), engines_(engines) {
    qRegisterMetaType<weir::remote::RemotePoolStatus>();
    // An endpoint edited or removed while shown: follow it, or go back to local.
    connect(engines, &RemoteEnginesController::endpointsChanged, this, [this] {
        if (endpointName_.isEmpty()) return;
        const std::optional<RemoteTarget> t = engines_->target(endpointName_);
        if (!t) setEndpointName({});
        else if (t->endpoint.baseUrl.toString() != serverUrl_ || t->model != model_ || t->endpoint.apiKey != apiKey_) restart();
    });
    updateSizing();
}

RemotePoolModel::~RemotePoolModel() = default;

void RemotePoolModel::setEndpointName(const QString& name) {
    if (name == endpointName_) return;
    endpointName_ = name;
    restart();
    emit endpointChanged();
}

void RemotePoolModel::setActive(bool on) {
    if (on == active_) return;
    active_ = on;
    restart();
}

void RemotePoolModel::setConversationsAtOnce(int n) {
    if (n == conversations_) return;
    conversations_ = n;
    updateSizing();
}

void RemotePoolModel::setContextLength(std::optional<qint64> tokens) {
    contextLength_ = tokens;
    updateSizing();
}

void RemotePoolModel::stopPolling() {
    if (poller_) {
        poller_->stop();
        disconnect(poller_, nullptr, this, nullptr);
        poller_->deleteLater();
        poller_ = nullptr;
    }
    if (modelsClient_) {
        disconnect(modelsClient_, nullptr, this, nullptr);
        modelsClient_->deleteLater();
        modelsClient_ = nullptr;
    }
}

// Settles the endpoint's details and, when active, polls it from scratch.
void RemotePoolModel::restart() {
    const bool wasPolling = polling();
    stopPolling();
    const std::optional<RemoteTarget> t =
        endpointName_.isEmpty() || !engines_ ? std::nullopt : engines_->target(endpointName_);
    const QString url = t ? t->endpoint.baseUrl.toString() : QString();
    const QString model = t ? t->model : QString();
    apiKey_ = t ? t->endpoint.apiKey : QString();
    if (url != serverUrl_ || model != model_) {
        serverUrl_ = url;
        model_ = model;
        status_.reset();
        contextLength_ = t ? t->contextLength : std::nullopt;
        emit endpointChanged();
        emit updated();
        updateSizing();
    }
    if (t && active_) {
        if (t->keyKnown) {
            startPolling(t->endpoint);
        } else {
            // The key is in the keyring: poll once it has answered (or without it when it failed).
            engines_->readApiKey(endpointName_, this, [this, name = endpointName_, base = t->endpoint.baseUrl](const KeyRead& r) {
                if (name != endpointName_ || !active_ || poller_) return;
                apiKey_ = r.key;
                const bool was = polling();
                startPolling({base, r.key});
                if (was != polling()) emit pollingChanged();
            });
        }
    }
    if (wasPolling != polling()) emit pollingChanged();
}

void RemotePoolModel::startPolling(const RemoteEndpoint& endpoint) {
    poller_ = new RemotePoolPoller(endpoint, engines_->clientOptions(), this);
    connect(poller_, &RemotePoolPoller::statusRead, this, &RemotePoolModel::setStatus);
    poller_->start(intervalMs_);
    // The sizing line needs the model's context length: ask once.
    if (!contextLength_ && !model_.isEmpty()) listModels(endpoint);
}

void RemotePoolModel::listModels(const RemoteEndpoint& endpoint) {
    modelsClient_ = new RemoteChatClient(endpoint, engines_->clientOptions(), this);
    RemoteChatClient* client = modelsClient_;
    const QUrl base = endpoint.baseUrl;
    connect(client, &RemoteChatClient::modelsListed, this, [this, client, base](quint64, const QList<RemoteModel>& models) {
        if (engines_) engines_->noteModels(base, models);
        for (const RemoteModel& m : models)
            if (m.id == model_) setContextLength(m.contextLength);
        modelsClient_ = nullptr;
        client->deleteLater();
    });
    // Without the list the sizing line says the context is unknown; the
    // gauges still come from the poller.
    connect(client, &RemoteChatClient::failed, this, [this, client] {
        modelsClient_ = nullptr;
        client->deleteLater();
    });
    client->listModels();
}

void RemotePoolModel::setStatus(const RemotePoolStatus& status) {
    status_ = status;
    emit updated();
    updateSizing();
}

QString RemotePoolModel::source() const { return status_ ? remoteSourceName(status_->source) : QString(); }

QVariantList RemotePoolModel::gauges() const {
    const RemotePoolStatus s = status_.value_or(RemotePoolStatus{});
    // Each gauge names where it was read: the server's main page, or /slots for what llama.cpp's /metrics lacks.
    const QString page = remoteSourceName(s.source);
    auto from = [&](const char* key) { return s.sourceOf.value(QLatin1String(key), page); };
    QVariantList out;
    // llama.cpp's slots that may share one cache: what each holds, not a total.
    const QString capacity = s.kvCapacityTokens ? QStringLiteral("of %1 tokens").arg(number(*s.kvCapacityTokens))
                             : s.slotContextTokens && s.maxRunning
                                 ? QStringLiteral("%1 slots of %2 tokens").arg(number(*s.maxRunning), number(*s.slotContextTokens))
                                 : QString();
    out << gauge(QStringLiteral("kvUsage"), QStringLiteral("KV cache in use"), s.kvUsage.has_value(),
                 s.kvUsage ? percent(*s.kvUsage) : QString(), s.kvUsage.value_or(0), from("kvUsage"), capacity);
    const QString most = s.maxRunning ? QStringLiteral("of %1 at most").arg(number(*s.maxRunning)) : QString();
    const double runningShare = s.running && s.maxRunning && *s.maxRunning > 0 ? double(*s.running) / *s.maxRunning : -1.0;
    out << gauge(QStringLiteral("running"), QStringLiteral("Running"), s.running.has_value(),
                 s.running ? number(*s.running) : QString(), runningShare, from("running"), most);
    out << gauge(QStringLiteral("waiting"), QStringLiteral("Waiting"), s.waiting.has_value(),
                 s.waiting ? number(*s.waiting) : QString(), -1.0, from("waiting"));
    out << gauge(QStringLiteral("prefixHitRate"), QStringLiteral("Prefix-cache hit rate"), s.prefixHitRate.has_value(),
                 s.prefixHitRate ? percent(*s.prefixHitRate) : QString(), s.prefixHitRate.value_or(0), from("prefixHitRate"));
    const double tps = s.tokensPerSecond.value_or(0);
    out << gauge(QStringLiteral("tokensPerSecond"), QStringLiteral("Tokens/s"), s.tokensPerSecond.has_value(),
                 QLocale().toString(tps, 'f', tps < 100 ? 1 : 0), -1.0, from("tokensPerSecond"));
    return out;
}

void RemotePoolModel::updateSizing() {
    RemoteSizingInput in;
    in.conversations = conversations_;
    in.contextLength = contextLength_;
    if (status_) {
        in.kvCapacityTokens = status_->kvCapacityTokens;
        in.maxRunning = status_->maxRunning;
        in.slotContextTokens = status_->slotContextTokens;
    }
    advice_ = adviseRemoteSizing(in);
    emit sizingChanged();
}

} // namespace weir::desktop
