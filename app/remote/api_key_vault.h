#pragma once
// Where the API keys of remote endpoints are kept: the system keyring through
// QtKeychain (Secret Service, KWallet, macOS Keychain, Windows Credential
// Store) when Weir was built with it and a keyring answers; else a JSON file
// readable and writable only by the user (0600). The first keyring failure
// (no D-Bus session, no keyring service) switches to the file for the rest of
// the session and is kept in words, so the UI can say where keys went.
// Keyring calls are asynchronous in QtKeychain; here each waits for its
// answer in a local event loop, at most kKeyringWaitMs.
#include <QList>
#include <QPair>
#include <QString>

namespace weir::remote {

class ApiKeyVault {
public:
    enum class Keyring { Try, Never };
    static constexpr int kKeyringWaitMs = 5000;

    // `service` names the keyring entries ("Weir remote endpoints").
    ApiKeyVault(const QString& filePath, const QString& service, Keyring keyring);

    // Reads the file (a damaged one is refused with the reason), makes it
    // private again if someone loosened it, and asks the keyring once
    // whether it answers.
    bool load(QString* error);

    QString read(const QString& name);
    bool write(const QString& name, const QString& key, QString* error);
    bool erase(const QString& name, QString* error);
    bool rename(const QString& from, const QString& to, QString* error);

    bool usingKeyring() const { return keyringState_ == State::Works; }
    // "in the system keyring", or "in FILE, readable only by you (...why...)".
    QString storageDescription() const;
    const QString& filePath() const { return path_; }

private:
    enum class State { Untried, Works, Unavailable };
    bool saveFile(QString* error) const;
    void probeKeyring();
    void keyringFailed(const QString& why);

    QString path_, service_;
    State keyringState_;
    QString keyringProblem_;
    QList<QPair<QString, QString>> fileKeys_;   // name -> key, as in the file
};

} // namespace weir::remote
