#pragma once
// The remote engines a user added: a name, the OpenAI base URL, the chosen
// model, and the API key. The list lives in remote-endpoints.json in the
// folder given (the desktop app passes its data folder, userDataDir()); the
// keys never go into it: they go to the system keyring, or where none
// answers to remote-endpoint-keys.json, readable only by the user (see
// ApiKeyVault). keyStorage() says which, for the UI to tell the user.
#include <QList>
#include <QString>
#include <QUrl>

#include "app/remote/api_key_vault.h"

namespace weir::remote {

struct RemoteEndpointEntry {
    QString name;      // unique, shown in the UI
    QUrl baseUrl;      // http(s)://host[:port][/v1]
    QString model;     // the chosen model id; empty until one is picked
};

class RemoteEndpointStore {
public:
    explicit RemoteEndpointStore(const QString& folder, ApiKeyVault::Keyring keyring = ApiKeyVault::Keyring::Try,
                                 const QString& keyringService = QStringLiteral("Weir remote endpoints"));

    // Reads both files. False with the file and the problem when one is
    // damaged (the store is then empty; nothing is overwritten until a save).
    bool load(QString* error);

    const QList<RemoteEndpointEntry>& endpoints() const { return entries_; }
    const RemoteEndpointEntry* find(const QString& name) const;

    // Each saves at once; false with the reason (a duplicate or empty name, a
    // URL that is not http(s) with a host, a file that cannot be written).
    bool add(const RemoteEndpointEntry& e, const QString& apiKey, QString* error);
    bool update(const QString& name, const RemoteEndpointEntry& e, QString* error);
    bool setModel(const QString& name, const QString& model, QString* error);
    bool setApiKey(const QString& name, const QString& apiKey, QString* error);
    bool remove(const QString& name, QString* error);

    QString apiKey(const QString& name) const;
    // Where the keys are kept, in words for the UI.
    QString keyStorage() const { return vault_.storageDescription(); }
    bool keysInKeyring() const { return vault_.usingKeyring(); }

    QString listPath() const;
    QString keysPath() const;

private:
    static bool validate(const RemoteEndpointEntry& e, QString* error);
    bool saveList(QString* error) const;

    QString folder_;
    QList<RemoteEndpointEntry> entries_;
    mutable ApiKeyVault vault_;   // reading a key may ask the keyring
};

} // namespace weir::remote
