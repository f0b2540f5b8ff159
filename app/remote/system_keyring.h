#pragma once
// The system keyring through QtKeychain (Secret Service, KWallet, macOS
// Keychain, Windows Credential Store), as a KeyringBackend. Each call starts
// one QtKeychain job and answers when it finishes; nothing waits for it.
#include <QObject>
#include <memory>

#include "app/remote/keyring_backend.h"

namespace weir::remote {

class SystemKeyring : public QObject, public KeyringBackend {
public:
    explicit SystemKeyring(const QString& service);
    void read(const QString& key, Done done) override;
    void write(const QString& key, const QString& secret, Done done) override;
    void erase(const QString& key, Done done) override;

private:
    QString service_;
};

// The keyring of this system, or none when Weir was built without QtKeychain
// (`why` then says so).
std::unique_ptr<KeyringBackend> makeSystemKeyring(const QString& service, QString* why);

} // namespace weir::remote
