#include "engine_host/EngineHost.h"

#include <QFileInfo>
#include <QMetaObject>
#include <algorithm>

#include "engine_host/EngineWorker.h"
#include "settings/ModelFileProblem.h"

namespace weir::desktop {

EngineHost::EngineHost(EngineFactory factory, QObject* parent)
    : QObject(parent),
      calls_(common::makeCallInbox(this)),
      events_(EngineEvents::create(common::Keep::Every, this, [this](EngineEvents&) { drainEvents(); })),
      status_(StatusSnapshots::create(common::Keep::Latest, this,
                                      [this](StatusSnapshots& s) {
                                          if (auto snapshot = s.take()) onStatus(snapshot->first, snapshot->second);
                                      })),
      generation_(std::make_shared<std::atomic<quint64>>(0)) {
    thread_.setObjectName(QStringLiteral("weir-engine-host"));
    worker_ = new EngineWorker(std::move(factory), this, calls_, events_, status_, generation_);
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    thread_.start();
    loadTicker_.setInterval(100);
    connect(&loadTicker_, &QTimer::timeout, this, &EngineHost::loadingSecondsChanged);
}

void EngineHost::toWorker(std::function<void()> call) { worker_->calls()->put(std::move(call)); }

EngineHost::~EngineHost() {
    // The engine's late events and snapshots, and the worker's late calls, have nobody to go to.
    events_->close();
    status_->close();
    calls_->close();
    generation_->fetch_add(1);
    // Shutting down is the one place the GUI waits for the engine thread: the
    // backend must be destroyed on the thread that created it.
    toWorker([w = worker_] { w->shutdown(); });
    thread_.quit();
    thread_.wait();
}

double EngineHost::loadingSeconds() const {
    return state_ == Loading && loadClock_.isValid() ? loadClock_.elapsed() / 1000.0 : 0.0;
}

void EngineHost::setState(State s, const QString& error) {
    state_ = s;
    errorString_ = error;
    if (s == Loading) {
        loadClock_.start();
        loadTicker_.start();
    } else {
        loadTicker_.stop();
    }
    emit stateChanged();
}

void EngineHost::load(const QString& path) {
    const quint64 serial = ++checkSerial_;
    if (!fileCheck_ || state_ != Ready) return startLoad(path);
    toWorker([this, check = fileCheck_, serial, path] {
        QString error;
        try {
            check(path.toStdString());
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        calls_->put([this, serial, path, error] { onFileChecked(serial, path, error); });
    });
}

void EngineHost::onFileChecked(quint64 serial, const QString& path, const QString& error) {
    if (serial != checkSerial_) return;  // another load, an unload or a cancel came since
    if (!error.isEmpty()) {
        // A plain sentence first, the reader's detail after it.
        const ModelFileProblem problem = describeModelFileProblem(error);
        emit loadRefused(path, problem.headline + u' ' + problem.detail);
        return;
    }
    startLoad(path);
}

void EngineHost::startLoad(const QString& path) {
    failAllActive(tr("The model was unloaded before this reply finished."));
    const quint64 generation = generation_->fetch_add(1) + 1;
    EngineOptions options = options_;
    options.modelPath = path.toStdString();
    modelPath_ = path;
    modelInfo_.clear();
    loadingFileSize_ = QFileInfo(path).size();
    setState(Loading);
    toWorker([w = worker_, generation, options] { w->load(generation, options); });
}

void EngineHost::cancelLoad() {
    ++checkSerial_;
    if (state_ != Loading) return;
    generation_->fetch_add(1);
    setState(NoModel, tr("Loading was cancelled."));
}

void EngineHost::unload() {
    ++checkSerial_;
    failAllActive(tr("The model was unloaded before this reply finished."));
    generation_->fetch_add(1);
    toWorker([w = worker_] { w->unload(); });
    modelInfo_.clear();
    setState(NoModel);
}

void EngineHost::onLoaded(quint64 generation, const QVariantMap& info) {
    if (generation != generation_->load()) return;
    modelInfo_ = info;
    setState(Ready);
}

void EngineHost::onLoadFailed(quint64 generation, const QString& message) {
    if (generation != generation_->load()) return;
    setState(Failed, message);
}

quint64 EngineHost::submit(ClientTag tag, std::vector<Message> messages, GenerateRequest request, PromptPlan plan) {
    const quint64 ticket = ++nextTicket_;
    active_.insert(ticket);
    emit activeRequestsChanged();
    if (state_ != Ready) {
        // Still answer through the signal, after the caller has the ticket.
        const QString why = state_ == Loading ? tr("The model is still loading.")
                                              : tr("No model is loaded.");
        QMetaObject::invokeMethod(this, [this, ticket, why] { onSubmitFailed(ticket, why); }, Qt::QueuedConnection);
        return ticket;
    }
    toWorker([w = worker_, ticket, tag, messages = std::move(messages), request = std::move(request), plan]() mutable {
        w->submit(ticket, tag, std::move(messages), std::move(request), plan);
    });
    return ticket;
}

quint64 EngineHost::submitChat(ClientTag tag, ChatPromptInput chat, GenerateRequest request, PromptPlan plan,
                               std::shared_ptr<ToolCallHandoff> handoff) {
    const quint64 ticket = ++nextTicket_;
    active_.insert(ticket);
    emit activeRequestsChanged();
    if (state_ != Ready) {
        const QString why = state_ == Loading ? tr("The model is still loading.") : tr("No model is loaded.");
        QMetaObject::invokeMethod(this, [this, ticket, why] { onSubmitFailed(ticket, why); }, Qt::QueuedConnection);
        return ticket;
    }
    toWorker([w = worker_, ticket, tag, chat = std::move(chat), request = std::move(request), plan,
              handoff = std::move(handoff)]() mutable {
        w->submitChat(ticket, tag, std::move(chat), std::move(request), plan, std::move(handoff));
    });
    return ticket;
}

void EngineHost::cancel(quint64 ticket) {
    if (!active_.contains(ticket)) return;
    toWorker([w = worker_, ticket] { w->cancel(ticket); });
}

void EngineHost::clearPrefixCache() {
    toWorker([w = worker_] { w->clearPrefixCache(); });
}

void EngineHost::setStatusInterval(int ms) {
    toWorker([w = worker_, ms] { w->setStatusInterval(ms); });
}

void EngineHost::setEndpoint(const EndpointConfig& config) {
    toWorker([w = worker_, config] { w->setEndpoint(config); });
}

void EngineHost::onEndpointState(const EndpointState& state) {
    endpointState_ = state;
    emit endpointStateChanged();
}

void EngineHost::onSubmitFailed(quint64 ticket, const QString& message) {
    if (!active_.remove(ticket)) return;
    emit activeRequestsChanged();
    emit failed(ticket, message, weir::Usage{});  // never reached the engine
}

void EngineHost::onPromptPrepared(quint64 ticket, int firstTurn, int promptTokens, int contextTokens) {
    if (active_.contains(ticket)) emit promptPrepared(ticket, firstTurn, promptTokens, contextTokens);
}

void EngineHost::onStatus(quint64 generation, const CacheStatus& status) {
    if (generation != generation_->load() || state_ != Ready) return;
    emit statusUpdated(status);
}

void EngineHost::failAllActive(const QString& message) {
    const QList<quint64> tickets = active_.values();
    active_.clear();
    if (!tickets.isEmpty()) emit activeRequestsChanged();
    for (quint64 t : tickets) emit failed(t, message, weir::Usage{});
}

void EngineHost::drainEvents() {
    // Every request's tokens in this batch become one signal (four streams
    // interleave, so adjacent-only merging would not help); a request's text
    // is always flushed before its terminal event.
    struct Pending { std::string text; int count = 0; };
    std::vector<std::pair<quint64, Pending>> pending;  // first-seen order
    auto flush = [&](quint64 ticket) {
        for (auto it = pending.begin(); it != pending.end(); ++it) {
            if (it->first != ticket) continue;
            const Pending p = std::move(it->second);
            pending.erase(it);
            if (p.count > 0) emit tokens(ticket, QString::fromStdString(p.text), p.count);
            return;
        }
    };
    const std::vector<std::pair<quint64, Event>> batch = events_->takeAll();
    bool changed = false;
    for (const auto& [ticket, e] : batch) {
        if (!active_.contains(ticket)) continue;  // ended already (unload, reload)
        if (e.kind == Event::Kind::Token) {
            auto it = std::find_if(pending.begin(), pending.end(), [t = ticket](const auto& p) { return p.first == t; });
            if (it == pending.end()) it = pending.insert(pending.end(), {ticket, Pending{}});
            it->second.text += e.text;
            ++it->second.count;
            continue;
        }
        flush(ticket);
        active_.remove(ticket);
        toWorker([w = worker_, t = ticket] { w->forget(t); });
        changed = true;
        switch (e.kind) {
        case Event::Kind::Done: emit finished(ticket, e.usage, e.finish); break;
        case Event::Kind::Error: emit failed(ticket, QString::fromStdString(e.text), e.usage); break;
        case Event::Kind::Cancelled: emit cancelled(ticket, e.usage); break;
        case Event::Kind::Token: break;
        }
    }
    for (auto& [ticket, p] : pending)
        if (p.count > 0 && active_.contains(ticket)) emit tokens(ticket, QString::fromStdString(p.text), p.count);
    if (changed) emit activeRequestsChanged();
}

} // namespace weir::desktop
