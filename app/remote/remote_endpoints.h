#pragma once
// The remote engines a user added: a name, the OpenAI base URL, the chosen
// model, and the API key. The list lives in remote-endpoints.json in the
// folder given (the desktop app passes its data folder, userDataDir()); the
// keys never go into it: they go to the system keyring, or where none
// answers to remote-endpoint-keys.json, readable only by the user (see
// ApiKeyVault). keyStorage() says which, for the UI to tell the user.
//
// Conversations name the endpoint they use (the name is what an export
// carries). A renamed endpoint remembers its former names, so a conversation
// that still says the old one (an import of an older export, a rename the
// database did not take) finds it: resolve().
#include <QList>
#include <QStringList>
#include <QString>
#include <QUrl>
#include <memory>
#include <optional>

#include "app/remote/api_key_vault.h"

namespace weir::remote {

struct RemoteEndpointEntry {
    QString name;      // unique, shown in the UI
    QUrl baseUrl;      // http(s)://host[:port][/v1]
    QString model;     // the chosen model id; empty until one is picked
    QStringList formerNames;  // what it was called before, oldest first
};

class RemoteEndpointStore {
public:
    using KeyDone = ApiKeyVault::SaveDone;

    explicit RemoteEndpointStore(const QString& folder, ApiKeyVault::Keyring keyring = ApiKeyVault::Keyring::Try,
                                 const QString& keyringService = QStringLiteral("Weir remote endpoints"));
    // With a keyring of the caller's (tests); none: keys in the file only.
    RemoteEndpointStore(const QString& folder, std::unique_ptr<KeyringBackend> keyring);

    // Reads both files. False with the file and the problem when one is
    // damaged (the store is then empty; nothing is overwritten until a save).
    bool load(QString* error);

    const QList<RemoteEndpointEntry>& endpoints() const { return entries_; }
    const RemoteEndpointEntry* find(const QString& name) const;
    // The endpoint called `name` now, else the one that was called so before.
    const RemoteEndpointEntry* resolve(const QString& name) const;

    // Each saves the list at once; false with the reason (a duplicate or empty
    // name, a URL that is not http(s) with a host, a file that cannot be
    // written). The key is saved in turn: `keyDone` gets the outcome, at once
    // when no keyring is involved, else when the keyring answers. A renamed
    // endpoint keeps its key and remembers its old name.
    bool add(const RemoteEndpointEntry& e, const QString& apiKey, QString* error, KeyDone keyDone = {});
    bool update(const QString& name, const RemoteEndpointEntry& e, QString* error, KeyDone keyDone = {});
    bool setModel(const QString& name, const QString& model, QString* error);
    bool setApiKey(const QString& name, const QString& apiKey, QString* error, KeyDone keyDone = {});
    bool remove(const QString& name, QString* error, KeyDone keyDone = {});

    // The key when it is in memory or the file (none: ask readApiKey, which
    // may wait for the keyring; it never blocks).
    std::optional<QString> knownApiKey(const QString& name) const { return vault_.known(name); }
    void readApiKey(const QString& name, QObject* context, ApiKeyVault::ReadDone done) { vault_.read(name, context, std::move(done)); }
    // Where the keys are kept, in words for the UI.
    QString keyStorage() const { return vault_.storageDescription(); }
    bool keysInKeyring() const { return vault_.usingKeyring(); }
    bool checkingKeyring() const { return vault_.checkingKeyring(); }
    void setKeyStorageChanged(std::function<void()> f) { vault_.setStorageChanged(std::move(f)); }
    void setKeyringWaitMs(int ms) { vault_.setKeyringWaitMs(ms); }

    QString listPath() const;
    QString keysPath() const;

private:
    static bool validate(const RemoteEndpointEntry& e, QString* error);
    bool saveList(QString* error) const;

    QString folder_;
    QList<RemoteEndpointEntry> entries_;
    ApiKeyVault vault_;
};

} // namespace weir::remote
