#pragma once
// The remote engines the user added (vLLM, SGLang, llama.cpp's server,
// Ollama, another Weir) for the settings page: the list, add / edit / remove,
// a connection test that lists the server's models (GET /v1/models) so the
// user can choose one, and where the API keys are kept. Every network call
// is asynchronous; failures come back in plain words (RemoteError), and a
// refused edit changes nothing, so the page keeps what was typed.
//
// The chat side asks target(name) for what it needs to talk to an engine;
// the key comes with it when it is in memory, else from readApiKey, which
// never waits on the UI thread (the keyring answers later).
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>
#include <memory>
#include <optional>

#include "app/remote/remote_chat_client.h"
#include "app/remote/remote_endpoints.h"

namespace weir::desktop {

// A remote engine as a conversation uses it.
struct RemoteTarget {
    QString name;                            // as it is called now
    weir::remote::RemoteEndpoint endpoint;   // base URL and API key (when keyKnown)
    bool keyKnown = true;                    // false: the key is in the keyring, not read yet
    QString model;                           // empty until the user chose one
    std::optional<qint64> contextLength;     // from the last model listing, when the server said
};

// What the chat header can say of a remote model's context.
struct RemoteContext {
    std::optional<qint64> tokens;  // the model's context length, when the server said
    bool asking = false;           // its models are being listed
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
    // A key that could not be saved after the form was accepted (the keyring
    // answers later), in a sentence; "" when none.
    Q_PROPERTY(QString keyProblem READ keyProblem NOTIFY keyProblemChanged)
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
    // With a keyring of the caller's (tests: one that answers late or fails); none: the file only.
    RemoteEnginesController(const QString& folder, std::unique_ptr<weir::remote::KeyringBackend> keyring,
                            const weir::remote::RemoteClientOptions& options = {}, QObject* parent = nullptr);
    ~RemoteEnginesController() override;

    QVariantList endpoints() const;
    QStringList names() const;
    QString keyStorage() const;
    bool keysInKeyring() const { return store_.keysInKeyring(); }
    QString keyProblem() const { return keyProblem_; }
    QString loadProblem() const { return loadProblem_; }
    QString testState() const { return testState_; }
    QString testMessage() const { return testMessage_; }
    QVariantList testModels() const { return testModels_; }
    const weir::remote::RemoteClientOptions& clientOptions() const { return options_; }

    // What a conversation needs to use the engine `name` (or the one that
    // was called so before a rename); none when no endpoint has that name.
    // Never waits: keyKnown is false when the key must come from readApiKey.
    std::optional<RemoteTarget> target(const QString& name) const;
    // Runs `done` once with the key of `name`: at once when it is in memory,
    // else when the keyring answers or gives up; never after `context` is gone.
    void readApiKey(const QString& name, QObject* context, weir::remote::ApiKeyVault::ReadDone done);
    // Each endpoint's former names, as (former, current) pairs.
    QList<QPair<QString, QString>> formerNames() const;
    void setKeyringWaitMs(int ms) { store_.setKeyringWaitMs(ms); }

    // The context of the model `name` uses, as far as its server said.
    RemoteContext contextOf(const QString& name) const;
    // Lists the models of `name`'s server for contextOf, once (again after an
    // edit); contextsChanged when it answered.
    void askContext(const QString& name);

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
    void keyProblemChanged();
    // An endpoint was renamed: what used `from` now uses `to`.
    void endpointRenamed(const QString& from, const QString& to);
    void contextsChanged();

private:
    void init();
    void setTest(const QString& state, const QString& message, const QVariantList& models = {});
    void startTest(const QUrl& url, const QString& key);
    std::optional<qint64> knownContextLength(const QUrl& baseUrl, const QString& model) const;
    void listForContext(const QUrl& baseUrl, const QString& key);
    // What a key change reports: a problem known at once is returned; one
    // that comes later (the keyring answered) becomes keyProblem.
    struct KeyReport;
    weir::remote::RemoteEndpointStore::KeyDone keyOutcome(const std::shared_ptr<KeyReport>& report);
    void setKeyProblem(const QString& problem);

    weir::remote::RemoteClientOptions options_;
    mutable weir::remote::RemoteEndpointStore store_;
    QString loadProblem_;
    QString keyProblem_;
    QString testState_, testMessage_;
    quint64 testGeneration_ = 0;  // a key read for an older test finds a newer one
    QVariantList testModels_;
    std::unique_ptr<weir::remote::RemoteChatClient> testClient_;
    // The models each server listed last (by normalized base URL), for context lengths.
    QHash<QString, QList<weir::remote::RemoteModel>> listed_;
    // Listings for the chat header's context: in flight, and those that failed (by URL).
    QHash<QString, QPointer<weir::remote::RemoteChatClient>> contextListings_;
    QSet<QString> contextUnlisted_;
};

} // namespace weir::desktop
