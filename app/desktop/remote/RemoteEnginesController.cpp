#include "RemoteEnginesController.h"

#include <QLocale>

namespace weir::desktop {

using namespace weir::remote;

namespace {

// The store's reasons are clauses ("there is already an endpoint named …");
// the page shows sentences.
QString sentence(QString s) {
    s = s.trimmed();
    if (s.isEmpty()) return s;
    s[0] = s[0].toUpper();
    if (!s.endsWith(u'.') && !s.endsWith(u'?') && !s.endsWith(u'!') && !s.endsWith(u')')) s += u'.';
    return s;
}

QString urlKey(const QUrl& baseUrl) { return RemoteChatClient::normalizedBaseUrl(baseUrl).toString(); }

QVariantMap entryMap(const RemoteEndpointEntry& e) {
    return {{QStringLiteral("name"), e.name}, {QStringLiteral("baseUrl"), e.baseUrl.toString()}, {QStringLiteral("model"), e.model}};
}

} // namespace

// A key change's outcome: `returned` once the form's call has returned, so a
// problem after that (the keyring answered late) is shown as keyProblem.
struct RemoteEnginesController::KeyReport {
    bool returned = false;
    QString problem;
};

RemoteEnginesController::RemoteEnginesController(const QString& folder, ApiKeyVault::Keyring keyring,
                                                 const RemoteClientOptions& options, QObject* parent)
    : QObject(parent), options_(options), store_(folder, keyring) {
    init();
}

RemoteEnginesController::RemoteEnginesController(const QString& folder, std::unique_ptr<KeyringBackend> keyring,
                                                 const RemoteClientOptions& options, QObject* parent)
    : QObject(parent), options_(options), store_(folder, std::move(keyring)) {
    init();
}

void RemoteEnginesController::init() {
    qRegisterMetaType<weir::remote::RemoteError>();
    qRegisterMetaType<QList<weir::remote::RemoteModel>>();
    // The keyring answered (or failed): the page says where keys go now.
    store_.setKeyStorageChanged([this] { emit endpointsChanged(); });
    QString error;
    if (!store_.load(&error)) loadProblem_ = sentence(error);
}

RemoteEnginesController::~RemoteEnginesController() = default;

QVariantList RemoteEnginesController::endpoints() const {
    QVariantList out;
    for (const RemoteEndpointEntry& e : store_.endpoints()) out << entryMap(e);
    return out;
}

QStringList RemoteEnginesController::names() const {
    QStringList out;
    for (const RemoteEndpointEntry& e : store_.endpoints()) out << e.name;
    return out;
}

QString RemoteEnginesController::keyStorage() const {
    if (store_.keysInKeyring()) return QStringLiteral("API keys are kept in the system keyring.");
    if (store_.checkingKeyring()) return QStringLiteral("Asking the system keyring whether it can keep the API keys\u2026");
    return sentence(QStringLiteral("API keys are kept ") + store_.keyStorage());
}

QVariantMap RemoteEnginesController::endpoint(const QString& name) const {
    const RemoteEndpointEntry* e = store_.find(name);
    return e ? entryMap(*e) : QVariantMap();
}

std::optional<RemoteTarget> RemoteEnginesController::target(const QString& name) const {
    const RemoteEndpointEntry* e = store_.resolve(name);
    if (!e) return std::nullopt;
    RemoteTarget t;
    t.name = e->name;
    const std::optional<QString> key = store_.knownApiKey(e->name);
    t.endpoint = {e->baseUrl, key.value_or(QString())};
    t.keyKnown = key.has_value();
    t.model = e->model;
    t.contextLength = knownContextLength(e->baseUrl, e->model);
    return t;
}

void RemoteEnginesController::readApiKey(const QString& name, QObject* context, ApiKeyVault::ReadDone done) {
    const RemoteEndpointEntry* e = store_.resolve(name);
    store_.readApiKey(e ? e->name : name, context, std::move(done));
}

QList<QPair<QString, QString>> RemoteEnginesController::formerNames() const {
    QList<QPair<QString, QString>> out;
    for (const RemoteEndpointEntry& e : store_.endpoints())
        for (const QString& former : e.formerNames) out.append({former, e.name});
    return out;
}

RemoteContext RemoteEnginesController::contextOf(const QString& name) const {
    RemoteContext c;
    const RemoteEndpointEntry* e = store_.resolve(name);
    if (!e) return c;
    c.tokens = knownContextLength(e->baseUrl, e->model);
    c.asking = contextListings_.contains(urlKey(e->baseUrl));
    return c;
}

void RemoteEnginesController::askContext(const QString& name) {
    const RemoteEndpointEntry* e = store_.resolve(name);
    if (!e || e->model.isEmpty()) return;
    const QString k = urlKey(e->baseUrl);
    if (listed_.contains(k) || contextListings_.contains(k) || contextUnlisted_.contains(k)) return;
    contextListings_.insert(k, nullptr);  // asking: the key may come first
    const QUrl url = e->baseUrl;
    readApiKey(e->name, this, [this, url, k](const KeyRead& r) {
        if (!contextListings_.contains(k)) return;
        if (r.ok) return listForContext(url, r.key);
        contextListings_.remove(k);
        contextUnlisted_.insert(k);
        emit contextsChanged();
    });
}

void RemoteEnginesController::listForContext(const QUrl& baseUrl, const QString& key) {
    const QString k = urlKey(baseUrl);
    auto* client = new RemoteChatClient(RemoteEndpoint{baseUrl, key}, options_, this);
    contextListings_.insert(k, client);
    connect(client, &RemoteChatClient::modelsListed, this, [this, client, baseUrl, k](quint64, const QList<RemoteModel>& models) {
        contextListings_.remove(k);
        client->deleteLater();
        noteModels(baseUrl, models);
    });
    connect(client, &RemoteChatClient::failed, this, [this, client, k] {
        contextListings_.remove(k);
        contextUnlisted_.insert(k);
        client->deleteLater();
        emit contextsChanged();
    });
    client->listModels();
}

std::optional<qint64> RemoteEnginesController::knownContextLength(const QUrl& baseUrl, const QString& model) const {
    for (const RemoteModel& m : listed_.value(urlKey(baseUrl)))
        if (m.id == model) return m.contextLength;
    return std::nullopt;
}

void RemoteEnginesController::noteModels(const QUrl& baseUrl, const QList<RemoteModel>& models) {
    listed_.insert(urlKey(baseUrl), models);
    contextUnlisted_.remove(urlKey(baseUrl));
    emit contextsChanged();
}

RemoteEndpointStore::KeyDone RemoteEnginesController::keyOutcome(const std::shared_ptr<KeyReport>& report) {
    return [this, report, self = QPointer<RemoteEnginesController>(this)](const QString& error) {
        if (error.isEmpty()) return;
        if (!report->returned) report->problem = error;
        else if (self) setKeyProblem(sentence(QStringLiteral("The API key was not saved: ") + error));
    };
}

void RemoteEnginesController::setKeyProblem(const QString& problem) {
    if (problem == keyProblem_) return;
    keyProblem_ = problem;
    emit keyProblemChanged();
}

QUrl RemoteEnginesController::parseBaseUrl(const QString& text, QString* error) {
    const QString typed = text.trimmed();
    if (typed.isEmpty()) {
        if (error) *error = QStringLiteral("Type the server's address, for example http://gpu-box:8000/v1.");
        return {};
    }
    const QUrl url(typed.contains(QLatin1String("://")) ? typed : QStringLiteral("http://") + typed, QUrl::StrictMode);
    const QString scheme = url.scheme();
    if (!url.isValid() || (scheme != QLatin1String("http") && scheme != QLatin1String("https")) || url.host().isEmpty()) {
        if (error)
            *error = QStringLiteral("“%1” is not an http:// or https:// address with a host (for example http://gpu-box:8000/v1).")
                         .arg(typed);
        return {};
    }
    return url;
}

QString RemoteEnginesController::addEndpoint(const QString& name, const QString& baseUrl, const QString& apiKey,
                                             const QString& model) {
    QString error;
    const QUrl url = parseBaseUrl(baseUrl, &error);
    if (url.isEmpty()) return error;
    setKeyProblem({});
    auto report = std::make_shared<KeyReport>();
    const bool saved = store_.add({name.trimmed(), url, model, {}}, apiKey.trimmed(), &error, keyOutcome(report));
    report->returned = true;
    if (!saved) return sentence(error);
    // The list is saved before the key: when only the key failed, the
    // endpoint is there (without it) and the page shows it.
    emit endpointsChanged();
    return report->problem.isEmpty() ? QString() : sentence(report->problem);
}

QString RemoteEnginesController::editEndpoint(const QString& oldName, const QString& name, const QString& baseUrl,
                                              const QString& model, bool replaceKey, const QString& apiKey) {
    QString error;
    const QUrl url = parseBaseUrl(baseUrl, &error);
    if (url.isEmpty()) return error;
    const QString newName = name.trimmed();
    setKeyProblem({});
    auto report = std::make_shared<KeyReport>();
    if (!store_.update(oldName, {newName, url, model, {}}, &error, keyOutcome(report))) {
        report->returned = true;
        return sentence(error);
    }
    if (replaceKey) store_.setApiKey(newName, apiKey.trimmed(), &error, keyOutcome(report));
    report->returned = true;
    contextUnlisted_.clear();  // an edited server is asked again
    if (oldName != newName) emit endpointRenamed(oldName, newName);
    emit endpointsChanged();
    return report->problem.isEmpty() ? QString() : sentence(report->problem);
}

QString RemoteEnginesController::removeEndpoint(const QString& name) {
    QString error;
    setKeyProblem({});
    auto report = std::make_shared<KeyReport>();
    const bool ok = store_.remove(name, &error, keyOutcome(report));
    report->returned = true;
    emit endpointsChanged();
    if (!ok) return sentence(error);
    return report->problem.isEmpty() ? QString() : sentence(report->problem);
}

QString RemoteEnginesController::chooseModel(const QString& name, const QString& model) {
    QString error;
    if (!store_.setModel(name, model, &error)) return sentence(error);
    contextUnlisted_.clear();
    emit endpointsChanged();
    return {};
}

void RemoteEnginesController::setTest(const QString& state, const QString& message, const QVariantList& models) {
    testState_ = state;
    testMessage_ = message;
    testModels_ = models;
    emit testChanged();
}

void RemoteEnginesController::resetTest() {
    ++testGeneration_;     // a key still being read is for no test now
    testClient_.reset();   // aborts the request, without signals
    if (!testState_.isEmpty()) setTest({}, {});
}

void RemoteEnginesController::testConnection(const QString& baseUrl, const QString& apiKey, const QString& savedName) {
    testClient_.reset();
    const quint64 generation = ++testGeneration_;
    QString error;
    const QUrl url = parseBaseUrl(baseUrl, &error);
    if (url.isEmpty()) return setTest(QStringLiteral("failed"), error);
    const QString key = apiKey.trimmed();
    if (!key.isEmpty() || savedName.isEmpty()) return startTest(url, key);
    // The saved key, from memory or the keyring (which answers later).
    setTest(QStringLiteral("testing"), QStringLiteral("Reading the saved API key\u2026"));
    readApiKey(savedName, this, [this, generation, url](const KeyRead& r) {
        if (generation != testGeneration_) return;
        if (!r.ok) return setTest(QStringLiteral("failed"), sentence(QStringLiteral("Could not read the saved API key from the system keyring: ") + r.problem));
        startTest(url, r.key);
    });
}

void RemoteEnginesController::startTest(const QUrl& url, const QString& key) {
    testClient_ = std::make_unique<RemoteChatClient>(RemoteEndpoint{url, key}, options_);
    RemoteChatClient* client = testClient_.get();
    const QString host = hostPortOf(RemoteChatClient::normalizedBaseUrl(url));
    connect(client, &RemoteChatClient::modelsListed, this, [this, client, url, host](quint64, const QList<RemoteModel>& models) {
        if (testClient_.get() != client) return;
        noteModels(url, models);
        QVariantList list;
        for (const RemoteModel& m : models) {
            const qint64 context = m.contextLength.value_or(0);
            list << QVariantMap{{QStringLiteral("id"), m.id},
                                {QStringLiteral("ownedBy"), m.ownedBy},
                                {QStringLiteral("contextLength"), context},
                                {QStringLiteral("label"), context > 0 ? QStringLiteral("%1 \u00b7 %2 tokens").arg(m.id, QLocale().toString(context))
                                                                      : m.id}};
        }
        const QString message =
            models.isEmpty() ? QStringLiteral("%1 answered, but lists no models.").arg(host)
            : models.size() == 1 ? QStringLiteral("%1 answered and serves 1 model.").arg(host)
                                 : QStringLiteral("%1 answered and serves %2 models.").arg(host).arg(models.size());
        // Deleting the client inside its own signal is not safe: later.
        testClient_.release()->deleteLater();
        setTest(QStringLiteral("ok"), message, list);
    });
    connect(client, &RemoteChatClient::failed, this, [this, client](quint64, const RemoteError& e) {
        if (testClient_.get() != client) return;
        testClient_.release()->deleteLater();
        setTest(QStringLiteral("failed"), e.message);
    });
    setTest(QStringLiteral("testing"), QStringLiteral("Asking %1 for its models…").arg(host));
    client->listModels();
}

} // namespace weir::desktop
