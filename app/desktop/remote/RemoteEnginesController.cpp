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

RemoteEnginesController::RemoteEnginesController(const QString& folder, ApiKeyVault::Keyring keyring,
                                                 const RemoteClientOptions& options, QObject* parent)
    : QObject(parent), options_(options), store_(folder, keyring) {
    qRegisterMetaType<weir::remote::RemoteError>();
    qRegisterMetaType<QList<weir::remote::RemoteModel>>();
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
    return sentence(QStringLiteral("API keys are kept ") + store_.keyStorage());
}

QVariantMap RemoteEnginesController::endpoint(const QString& name) const {
    const RemoteEndpointEntry* e = store_.find(name);
    return e ? entryMap(*e) : QVariantMap();
}

std::optional<RemoteTarget> RemoteEnginesController::target(const QString& name) const {
    const RemoteEndpointEntry* e = store_.find(name);
    if (!e) return std::nullopt;
    RemoteTarget t;
    t.name = e->name;
    t.endpoint = {e->baseUrl, store_.apiKey(e->name)};
    t.model = e->model;
    t.contextLength = knownContextLength(e->baseUrl, e->model);
    return t;
}

std::optional<qint64> RemoteEnginesController::knownContextLength(const QUrl& baseUrl, const QString& model) const {
    for (const RemoteModel& m : listed_.value(urlKey(baseUrl)))
        if (m.id == model) return m.contextLength;
    return std::nullopt;
}

void RemoteEnginesController::noteModels(const QUrl& baseUrl, const QList<RemoteModel>& models) {
    listed_.insert(urlKey(baseUrl), models);
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
    if (!store_.add({name.trimmed(), url, model}, apiKey.trimmed(), &error)) {
        // The list is saved before the key: when only the key failed, the
        // endpoint is there (without it) and the page shows it.
        if (store_.find(name.trimmed())) emit endpointsChanged();
        return sentence(error);
    }
    emit endpointsChanged();
    return {};
}

QString RemoteEnginesController::editEndpoint(const QString& oldName, const QString& name, const QString& baseUrl,
                                              const QString& model, bool replaceKey, const QString& apiKey) {
    QString error;
    const QUrl url = parseBaseUrl(baseUrl, &error);
    if (url.isEmpty()) return error;
    const QString newName = name.trimmed();
    if (!store_.update(oldName, {newName, url, model}, &error)) {
        // Only a failed move of the key to the new name leaves the list changed.
        if (oldName != newName && store_.find(newName)) emit endpointsChanged();
        return sentence(error);
    }
    if (replaceKey && !store_.setApiKey(newName, apiKey.trimmed(), &error)) {
        emit endpointsChanged();
        return sentence(error);
    }
    emit endpointsChanged();
    return {};
}

QString RemoteEnginesController::removeEndpoint(const QString& name) {
    QString error;
    const bool ok = store_.remove(name, &error);
    emit endpointsChanged();
    return ok ? QString() : sentence(error);
}

QString RemoteEnginesController::chooseModel(const QString& name, const QString& model) {
    QString error;
    if (!store_.setModel(name, model, &error)) return sentence(error);
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
    testClient_.reset();   // aborts the request, without signals
    if (!testState_.isEmpty()) setTest({}, {});
}

void RemoteEnginesController::testConnection(const QString& baseUrl, const QString& apiKey, const QString& savedName) {
    testClient_.reset();
    QString error;
    const QUrl url = parseBaseUrl(baseUrl, &error);
    if (url.isEmpty()) return setTest(QStringLiteral("failed"), error);
    QString key = apiKey.trimmed();
    if (key.isEmpty() && !savedName.isEmpty()) key = store_.apiKey(savedName);

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
