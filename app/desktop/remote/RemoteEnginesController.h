#pragma once
// The remote engines the user added (vLLM, SGLang, llama.cpp's server,
// Ollama, another Weir) for the settings page: the list, add / edit / remove,
// a connection test that lists the server's models (GET /v1/models) so the
// user can choose one, and where the API keys are kept. Every network call
// is asynchronous; failures come back in plain words (RemoteError), and a
// refused edit changes nothing, so the page keeps what was typed.
//
// The chat side asks target(name) for what it needs to talk to an engine.
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>
#include <memory>
#include <optional>

#include "app/remote/remote_chat_client.h"
#include "app/remote/remote_endpoints.h"

namespace weir::desktop {

// A remote engine as a conversation uses it.
struct RemoteTarget {
    QString name;
    weir::remote::RemoteEndpoint endpoint;   // base URL and API key
    QString model;                           // empty until the user chose one
    std::optional<qint64> contextLength;     // from the last model listing, when the server said
};

class RemoteEnginesController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("RemoteEnginesController is created by the app")
    // [{name, baseUrl, model}], in the order added (keys are not read for the list).
    Q_PROPERTY(QVariantList endpoints READ endpoints NOTIFY endpointsChanged)
    Q_PROPERTY(QStringList names READ names NOTIFY endpointsChanged)
    // "API keys are kept in the system keyring." or the file and why.
    Q_PROPERTY(QString keyStorage READ keyStorage NOTIFY endpointsChanged)
    Q_PROPERTY(bool keysInKeyring READ keysInKeyring NOTIFY endpointsChanged)
    // A damaged remote-endpoints.json at start ("" when it read fine).
    Q_PROPERTY(QString loadProblem READ loadProblem CONSTANT)
    // The connection test: "" (none yet), "testing", "ok" or "failed".
    Q_PROPERTY(QString testState READ testState NOTIFY testChanged)
    Q_PROPERTY(QString testMessage READ testMessage NOTIFY testChanged)
    // The models it listed: [{id, ownedBy, contextLength (0 = not said), label}].
    Q_PROPERTY(QVariantList testModels READ testModels NOTIFY testChanged)

public:
    // `folder` holds remote-endpoints.json (the app's data folder).
    explicit RemoteEnginesController(const QString& folder,
                                     weir::remote::ApiKeyVault::Keyring keyring = weir::remote::ApiKeyVault::Keyring::Try,
                                     const weir::remote::RemoteClientOptions& options = {}, QObject* parent = nullptr);
    ~RemoteEnginesController() override;

    QVariantList endpoints() const;
    QStringList names() const;
    QString keyStorage() const;
    bool keysInKeyring() const { return store_.keysInKeyring(); }
    QString loadProblem() const { return loadProblem_; }
    QString testState() const { return testState_; }
    QString testMessage() const { return testMessage_; }
    QVariantList testModels() const { return testModels_; }
    const weir::remote::RemoteClientOptions& clientOptions() const { return options_; }

    // What a conversation needs to use the engine `name`; none when no
    // endpoint has that name. Reads the key (from the keyring, when it is there).
    std::optional<RemoteTarget> target(const QString& name) const;

    // Remembers what a server listed (the pool monitor lists them too), for
    // the context lengths in target().
    void noteModels(const QUrl& baseUrl, const QList<weir::remote::RemoteModel>& models);

    // "http://" is added to an address typed without a scheme; "" with the
    // reason in *error when it is not an http(s) address with a host.
    static QUrl parseBaseUrl(const QString& text, QString* error);

    // Each returns "" when saved, else why not, in a sentence (nothing changed).
    Q_INVOKABLE QString addEndpoint(const QString& name, const QString& baseUrl, const QString& apiKey,
                                    const QString& model = {});
    // replaceKey: false keeps the stored key (the form shows none); true
    // stores apiKey, and an empty one removes the key.
    Q_INVOKABLE QString editEndpoint(const QString& oldName, const QString& name, const QString& baseUrl,
                                     const QString& model, bool replaceKey, const QString& apiKey);
    Q_INVOKABLE QString removeEndpoint(const QString& name);
    Q_INVOKABLE QString chooseModel(const QString& name, const QString& model);
    // {name, baseUrl, model} of one endpoint ({} when unknown).
    Q_INVOKABLE QVariantMap endpoint(const QString& name) const;

    // Lists the models at baseUrl with apiKey, or with the saved key of
    // `savedName` when apiKey is empty. Ends in testChanged with "ok" or
    // "failed"; a new test replaces one still running.
    Q_INVOKABLE void testConnection(const QString& baseUrl, const QString& apiKey, const QString& savedName = {});
    // Stops a test still running and forgets the last result (the form was
    // cleared or switched to another endpoint).
    Q_INVOKABLE void resetTest();

signals:
    void endpointsChanged();
    void testChanged();

private:
    void setTest(const QString& state, const QString& message, const QVariantList& models = {});
    std::optional<qint64> knownContextLength(const QUrl& baseUrl, const QString& model) const;

    weir::remote::RemoteClientOptions options_;
    mutable weir::remote::RemoteEndpointStore store_;
    QString loadProblem_;
    QString testState_, testMessage_;
    QVariantList testModels_;
    std::unique_ptr<weir::remote::RemoteChatClient> testClient_;
    // The models each server listed last (by normalized base URL), for context lengths.
    QHash<QString, QList<weir::remote::RemoteModel>> listed_;
};

} // namespace weir::desktop
