#pragma once
// Where the API keys of remote endpoints are kept: the system keyring
// (SystemKeyring, through QtKeychain) when Weir was built with it and a
// keyring answers; else a JSON file readable and writable only by the user
// (0600). The first keyring failure (no D-Bus session, no keyring service)
// switches to the file for the rest of the session and is kept in words, so
// the UI can say where keys went.
//
// Nothing here waits: keyring calls are asynchronous and answer through
// callbacks, one at a time and in the order they were made (a read after a
// write sees the write), each given up after keyringWaitMs. A key read or
// written once is kept in memory for the session, so known() answers at once
// from then on; a key in the file is always known.
#include <QHash>
#include <QList>
#include <QObject>
#include <QPair>
#include <QPointer>
#include <QString>
#include <deque>
#include <functional>
#include <memory>
#include <optional>

#include "app/remote/keyring_backend.h"

namespace weir::remote {

// A key as read: `key` is "" when none is stored. When ok is false,
// `problem` says why the keyring did not give it, as a clause ("it did not
// answer within 5 s", "access to the keyring was refused").
struct KeyRead {
    bool ok = true;
    QString key;
    QString problem;
};

class ApiKeyVault {
public:
    enum class Keyring { Try, Never };
    static constexpr int kKeyringWaitMs = 5000;
    using ReadDone = std::function<void(const KeyRead&)>;
    using SaveDone = std::function<void(const QString& error)>;  // "" when saved

    // `service` names the keyring entries ("Weir remote endpoints").
    ApiKeyVault(const QString& filePath, const QString& service, Keyring keyring);
    // With a keyring of the caller's (tests: a slow or failing one); none: the file only.
    ApiKeyVault(const QString& filePath, std::unique_ptr<KeyringBackend> keyring);
    ~ApiKeyVault();
    ApiKeyVault(const ApiKeyVault&) = delete;
    ApiKeyVault& operator=(const ApiKeyVault&) = delete;

    // Reads the file (a damaged one is refused with the reason), makes it
    // private again if someone loosened it, and asks the keyring whether it
    // answers (the answer comes later; storageChanged then runs).
    bool load(QString* error);

    // The key when it is known without asking the keyring: in the file, read
    // or written in this session, or none anywhere when no keyring is used.
    std::optional<QString> known(const QString& name) const;
    // Runs `done` once with the key: at once when it is known, else when the
    // keyring answers or gives up. Never after `context` is gone (when given).
    void read(const QString& name, QObject* context, ReadDone done);
    // Each runs `done` once when the change is saved or refused (at once when
    // no keyring is involved). The change is seen by known() and read() at once.
    void write(const QString& name, const QString& key, SaveDone done = {});
    void erase(const QString& name, SaveDone done = {});
    void rename(const QString& from, const QString& to, SaveDone done = {});

    bool usingKeyring() const { return keyringState_ == State::Works; }
    // A keyring is there and has not answered yet: where keys go is not settled.
    bool checkingKeyring() const { return keyringState_ == State::Untried && keyring_; }
    // "in the system keyring", or "in FILE, readable only by you (...why...)".
    QString storageDescription() const;
    const QString& filePath() const { return path_; }
    // Runs when where keys are kept changes: the keyring answered the first
    // time, or failed and the file took over.
    void setStorageChanged(std::function<void()> f) { storageChanged_ = std::move(f); }
    void setKeyringWaitMs(int ms) { waitMs_ = ms; }

private:
    enum class State { Untried, Works, Unavailable };
    using Step = std::function<void()>;
    bool saveFile(QString* error) const;
    void keyringFailed(const QString& why);
    // Keyring work, one step at a time: `work` calls the Step it is given when done.
    void enqueue(std::function<void(Step next)> work);
    void runNext();
    // One keyring call with the time limit; `done` runs once, never after the vault.
    void ask(std::function<void(KeyringBackend::Done)> call, KeyringBackend::Done done);
    // The first keyring work: is there a keyring that answers?
    void startProbe();
    // The keyring steps themselves, run in turn; each calls `done` once.
    void readNow(const QString& name, ReadDone done);
    void writeNow(const QString& name, const QString& key, SaveDone done);
    void eraseNow(const QString& name, SaveDone done);
    bool putInFile(const QString& name, const QString& key, QString* error);
    bool dropFromFile(const QString& name, QString* error);

    QString path_;
    std::unique_ptr<KeyringBackend> keyring_;
    State keyringState_;
    QString keyringProblem_;
    QList<QPair<QString, QString>> fileKeys_;  // name -> key, as in the file
    QHash<QString, QString> known_;            // read or written this session ("" = none stored)
    std::deque<std::function<void(Step)>> queue_;
    bool running_ = false;
    bool probeStarted_ = false;
    int waitMs_ = kKeyringWaitMs;
    std::function<void()> storageChanged_;
    QObject timers_;                            // the context of the time limits: they go with the vault
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

} // namespace weir::remote
