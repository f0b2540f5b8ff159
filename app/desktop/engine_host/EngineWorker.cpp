#include "engine_host/EngineWorker.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaObject>
#include <algorithm>
#include <exception>

#include "engine_host/EngineHost.h"
#include "settings/BaseModelGuess.h"
#include "settings/ModelCatalogue.h"
#ifdef WEIR_HAVE_SERVER
#include "app/server/api_server.h"
#endif

namespace weir::desktop {

EngineWorker::EngineWorker(EngineFactory factory, EngineHost* host, std::shared_ptr<common::CallInbox> hostCalls,
                           std::shared_ptr<EngineEvents> events, std::shared_ptr<StatusSnapshots> status,
                           std::shared_ptr<std::atomic<quint64>> generation)
    : factory_(std::move(factory)), calls_(common::makeCallInbox(this)), host_(host), hostCalls_(std::move(hostCalls)),
      events_(std::move(events)), generation_(std::move(generation)),
      statusTimer_(this),  // parented, so it moves to the engine host thread with us
      status_(std::move(status)) {
    statusTimer_.setInterval(250);
    connect(&statusTimer_, &QTimer::timeout, this, &EngineWorker::pollStatus);
}

EngineWorker::~EngineWorker() = default;

void EngineWorker::shutdown() {
    server_.reset();  // before the engine it serves
    statusTimer_.stop();
    backend_.reset();  // the engine's destructor stops its thread: no sink calls after this
    requests_.clear();
}

void EngineWorker::load(quint64 generation, const EngineOptions& options) {
    unload();
    if (generation_->load() != generation) return;  // cancelled while queued
    std::unique_ptr<EngineBackend> backend;
    QString error;
    try {
        backend = factory_(options);
    } catch (const std::exception& e) {
        error = QString::fromUtf8(e.what());
    } catch (...) {
        error = QStringLiteral("unknown error while loading the model");
    }
    if (generation_->load() != generation) return;  // cancelled while loading: drop it
    if (!backend) {
        if (error.isEmpty()) error = QStringLiteral("the engine could not be created");
        postToHost([host = host_, generation, error] { host->onLoadFailed(generation, error); });
        return;
    }
    backend_ = std::move(backend);
    backendGeneration_ = generation;
    const QVariantMap info = describe(options);
    postToHost([host = host_, generation, info] { host->onLoaded(generation, info); });
    statusTimer_.start();
    pollStatus();
    startEndpoint();
}

void EngineWorker::unload() {
    stopEndpoint();  // its requests end (cancelled) before the engine goes
    statusTimer_.stop();
    const bool hadModel = backend_ != nullptr;
    backend_.reset();
    requests_.clear();
#ifdef __GLIBC__
    // A model leaves tens of MiB of small freed blocks (its vocabulary, its
    // tables) in malloc's heaps, which glibc keeps resident as long as one
    // live block sits above them; hand the free pages back, or the app's
    // size after a switch depends on where the next model's blocks landed.
    if (hadModel) malloc_trim(0);
#else
    (void)hadModel;
#endif
}

void EngineWorker::postToHost(std::function<void()> call) { hostCalls_->put(std::move(call)); }

void EngineWorker::failSubmit(quint64 ticket, const QString& message) {
    postToHost([host = host_, ticket, message] { host->onSubmitFailed(ticket, message); });
}

// Events go to the host's inbox, which hands them over in order.
void EngineWorker::submitPrepared(quint64 ticket, GenerateRequest request) {
    std::shared_ptr<EngineEvents> events = events_;
    const uint64_t id = backend_->submit(std::move(request), [events, ticket](const Event& e) { events->put({ticket, e}); });
    requests_.insert(ticket, id);
}

size_t EngineWorker::contextTokens() const {
    const ModelConfig& model = backend_->modelConfig();
    const int32_t limit = backend_->options().maxContext;
    size_t context = size_t(std::max(0, model.nCtxTrain));
    if (limit > 0 && (context == 0 || size_t(limit) < context)) context = size_t(limit);
    return context;
}

// The reply keeps up to a quarter of the context for itself.
static size_t replyRoom(const GenerateRequest& request, size_t context) {
    return std::min(size_t(std::max(1, request.maxTokens)), context / 4);
}

void EngineWorker::submitTurns(quint64 ticket, ClientTag tag, const std::vector<Message>& turns, const PromptPlan& plan,
                               GenerateRequest request, const std::function<size_t(const std::vector<Message>&)>& render,
                               const std::function<void(GenerateRequest&)>& finish) {
    auto fail = [this, ticket](const QString& message) { failSubmit(ticket, message); };
    if (!backend_) return fail(tr("No model is loaded."));
    try {
        const size_t context = contextTokens();
        // The turns measured are the system turns and a suffix, so their count
        // names them: the last one measured is kept, usually the one sent.
        size_t renderedTurns = 0;
        const ContextFit fit = fitToContext(turns, plan, context, replyRoom(request, context),
                                            [&](const std::vector<Message>& sent) {
            const size_t tokens = render(sent);
            renderedTurns = sent.size();
            return tokens;
        });
        if (!fit.ok) return fail(QString::fromStdString(fit.error));
        const size_t systemTurns = std::min<size_t>(size_t(std::max(0, plan.systemTurns)), turns.size());
        if (renderedTurns != systemTurns + (turns.size() - size_t(fit.firstTurn))) {
            std::vector<Message> sent(turns.begin(), turns.begin() + std::ptrdiff_t(systemTurns));
            sent.insert(sent.end(), turns.begin() + fit.firstTurn, turns.end());
            render(sent);
        }
        finish(request);
        // The reply ends at the edge of the context (finish reason length).
        if (context > 0) {
            const size_t room = context > request.prompt.size() ? context - request.prompt.size() : 1;
            request.maxTokens = int(std::min<size_t>(size_t(std::max(1, request.maxTokens)), room));
        }
        request.tag = tag;
        const int firstTurn = fit.firstTurn, promptTokens = int(request.prompt.size()), contextTokens = int(context);
        postToHost([host = host_, ticket, firstTurn, promptTokens, contextTokens] {
            host->onPromptPrepared(ticket, firstTurn, promptTokens, contextTokens);
        });
        submitPrepared(ticket, std::move(request));
    } catch (const std::exception& e) {
        fail(QString::fromUtf8(e.what()));
    } catch (...) {
        // Whatever the backend throws, the ticket still gets its one failed signal.
        fail(QStringLiteral("unknown error while submitting the request"));
    }
}

void EngineWorker::submit(quint64 ticket, ClientTag tag, std::vector<Message> messages,
                          GenerateRequest request, PromptPlan plan) {
    std::vector<int32_t> prompt;
    submitTurns(ticket, tag, messages, plan, std::move(request),
                [&](const std::vector<Message>& turns) {
                    prompt = plan.continueLast ? backend_->tokenizeChatContinuation(turns) : backend_->tokenizeChat(turns);
                    return prompt.size();
                },
                [&](GenerateRequest& r) { r.prompt = std::move(prompt); });
}

void EngineWorker::submitChat(quint64 ticket, ClientTag tag, ChatPromptInput chat, GenerateRequest request,
                              PromptPlan plan, std::shared_ptr<ToolCallHandoff> handoff) {
    // Each JSON message is a turn for fitToContext (role for where a kept
    // history may start; the whole object kept to render the subset).
    const QJsonArray all = QJsonDocument::fromJson(QByteArray::fromStdString(chat.messagesJson)).array();
    std::vector<Message> turns;
    turns.reserve(size_t(all.size()));
    for (const QJsonValue& v : all)
        turns.push_back({v.toObject().value(u"role").toString().toStdString(), {},
                         QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact).toStdString()});
    PreparedChat prepared;
    submitTurns(ticket, tag, turns, plan, std::move(request),
                [&](const std::vector<Message>& sent) {
                    std::string json = "[";
                    for (size_t i = 0; i < sent.size(); ++i) json += (i ? "," : "") + sent[i].fieldsJson;
                    ChatPromptInput subset = chat;
                    subset.messagesJson = json + "]";
                    prepared = backend_->prepareChat(subset);
                    return prepared.prompt.size();
                },
                [&](GenerateRequest& r) {
                    r.prompt = std::move(prepared.prompt);
                    r.stop.insert(r.stop.end(), prepared.stop.begin(), prepared.stop.end());
                    r.showSpecialTokens = r.showSpecialTokens || prepared.showSpecialTokens;
                    // A reply held to the forced-call JSON is read as that JSON, not by the family's reader.
                    if (!handoff || !prepared.toolsActive || r.constraint.kind != OutputConstraint::Kind::None) return;
                    if (std::unique_ptr<ToolCallReader> reader = backend_->toolCallReader(prepared.toolNames)) {
                        reader->push(prepared.forcedPrefix);
                        handoff->put(std::move(reader));
                    }
                });
}

void EngineWorker::cancel(quint64 ticket) {
    const auto it = requests_.find(ticket);
    if (it == requests_.end() || !backend_) return;
    backend_->cancel(it.value());
    requests_.erase(it);
}

void EngineWorker::forget(quint64 ticket) { requests_.remove(ticket); }

void EngineWorker::setStatusInterval(int ms) { statusTimer_.setInterval(ms); }

void EngineWorker::clearPrefixCache() {
    if (!backend_) return;
    backend_->clearPrefixCache();
    pollStatus();  // show the freed pages at once
}

void EngineWorker::setEndpoint(const EndpointConfig& config) {
    endpoint_ = config;
    stopEndpoint(false);  // one report below, not an intermediate "stopped"
    startEndpoint();
}

void EngineWorker::stopEndpoint(bool report) {
    server_.reset();
    endpointState_.listening = false;
    endpointState_.url.clear();
    endpointState_.warning.clear();
    endpointState_.activeSessions = 0;
    if (report) reportEndpoint();
}

void EngineWorker::startEndpoint() {
    endpointState_.error.clear();
    endpointState_.waitingForModel = false;
    if (!endpoint_.enabled) return reportEndpoint();
#ifdef WEIR_HAVE_SERVER
    endpointState_.available = true;  // each backend decides anew (a reload may bring a real engine)
    if (!backend_) {
        endpointState_.waitingForModel = true;
        endpointState_.error = tr("The endpoint starts when a model is loaded.");
        return reportEndpoint();
    }
    Engine* engine = backend_->engine();
    if (!engine) {
        endpointState_.available = false;
        endpointState_.error = tr("This engine backend cannot be served over HTTP.");
        return reportEndpoint();
    }
    server::ServerOptions options;
    options.host = endpoint_.host.trimmed().isEmpty() ? QStringLiteral("127.0.0.1") : endpoint_.host.trimmed();
    options.port = quint16(std::clamp(endpoint_.port, 0, 65535));
    options.apiKey = endpoint_.apiKey;
    options.corsOrigins = endpoint_.corsOrigins;
    auto server = std::make_unique<server::ApiServer>(*engine, options);
    QString error, warning;
    if (!server->start(&error, &warning)) {
        endpointState_.error = error;
        return reportEndpoint();
    }
    connect(server.get(), &server::ApiServer::sessionStarted, this, [this] {
        ++endpointState_.activeSessions;
        ++endpointState_.sessionsServed;
        reportEndpoint();
    });
    connect(server.get(), &server::ApiServer::sessionFinished, this, [this] {
        endpointState_.activeSessions = std::max(0, endpointState_.activeSessions - 1);
        reportEndpoint();
    });
    endpointState_.listening = true;
    endpointState_.url = server->url();
    endpointState_.warning = warning;
    server_ = std::move(server);
#else
    endpointState_.available = false;
    endpointState_.error = tr("This build has no HTTP endpoint.");
#endif
    reportEndpoint();
}

void EngineWorker::reportEndpoint() {
    postToHost([host = host_, state = endpointState_] { host->onEndpointState(state); });
}

void EngineWorker::pollStatus() {
    if (!backend_) return;
    // One the host has not taken yet is replaced by this one.
    status_->put({backendGeneration_, backend_->cacheStatus()});
}

QVariantMap EngineWorker::describe(const EngineOptions& options) const {
    const ModelConfig& c = backend_->modelConfig();
    const EngineOptions& used = backend_->options();
    int sliding = 0;
    for (bool b : c.layerSlides) sliding += b ? 1 : 0;
    const CacheStatus status = backend_->cacheStatus();
    QVariantMap m;
    m["path"] = QString::fromStdString(options.modelPath);
    m["fileName"] = QFileInfo(QString::fromStdString(options.modelPath)).fileName();
    m["fileSize"] = QFileInfo(QString::fromStdString(options.modelPath)).size();
    // A catalogue model is shown by the catalogue's name; others by general.name.
    const QString listed = catalogueName(m["fileName"].toString());
    m["name"] = listed.isEmpty() ? QString::fromStdString(c.name) : listed;
    m["architecture"] = QString::fromStdString(c.architecture);
    m["quantization"] = QString::fromStdString(c.quantization);
    m["parameters"] = double(c.parameterCount);
    m["contextLength"] = c.nCtxTrain;
    // What one conversation may use: the model's context, or less where Max context says so.
    m["contextTokens"] = used.maxContext > 0 && (c.nCtxTrain <= 0 || used.maxContext < c.nCtxTrain) ? used.maxContext
                                                                                                  : c.nCtxTrain;
    m["slidingWindow"] = c.slidingWindow;
    m["layers"] = c.nLayer;
    m["slidingLayers"] = sliding;
    m["fullLayers"] = c.nLayer - sliding;
    QString pattern;  // one letter per layer: S sliding, F full attention
    for (bool b : c.layerSlides) pattern += b ? u'S' : u'F';
    m["layerPattern"] = pattern;
    m["heads"] = c.nHead;
    m["kvHeads"] = c.nHeadKv;
    m["headDimK"] = c.headDimK;
    m["headDimV"] = c.headDimV;
    m["embedding"] = c.nEmbd;
    m["vocab"] = c.nVocab;
    m["threads"] = used.threads;
    m["maxRunning"] = used.maxRunningRequests;
    m["prefillChunk"] = used.prefillChunk;
    m["pageSize"] = used.pageSize;
    m["kvDtype"] = QString::fromLatin1(kvDtypeName(used.kvDtype));
    m["fullPoolTokens"] = qint64(status.full.capacityTokens);
    m["windowPoolTokens"] = qint64(status.window.capacityTokens);
    m["fullPoolBytes"] = qint64(status.full.totalBytes);
    m["windowPoolBytes"] = qint64(status.window.totalBytes);
    m["windowFloorTokens"] = qint64(status.window.floorTokens);
    // Where the weights and both pools live ("cpu" or "cuda:N") and its name.
    m["device"] = QString::fromStdString(status.device);
    m["deviceName"] = QString::fromStdString(status.deviceName);
    m["chatTemplate"] = QString::fromStdString(backend_->chatTemplateDescription());
    m["baseModel"] = looksLikeBaseModel(m["name"].toString(), m["fileName"].toString(), backend_->hasOwnChatTemplate());
    return m;
}

} // namespace weir::desktop
