#pragma once
// The seam between ApiKeyVault and a keyring: three asynchronous calls, each
// answered exactly once through its callback, on the thread that made it and
// never from inside the call itself. SystemKeyring is the real one
// (QtKeychain); tests give the vault one that answers late, fails or never
// answers. The vault adds the time limit, so a keyring need not have one.
#include <QString>
#include <functional>

namespace weir::remote {

struct KeyringReply {
    enum class Status { Ok, NotFound, Failed };
    Status status = Status::Failed;
    QString value;    // the secret read (Ok from read)
    QString problem;  // why it failed, in words (Failed)

    static KeyringReply ok(const QString& value = {}) { return {Status::Ok, value, {}}; }
    static KeyringReply notFound() { return {Status::NotFound, {}, {}}; }
    static KeyringReply failed(const QString& why) { return {Status::Failed, {}, why}; }
};

class KeyringBackend {
public:
    using Done = std::function<void(const KeyringReply&)>;
    virtual ~KeyringBackend() = default;
    virtual void read(const QString& key, Done done) = 0;
    virtual void write(const QString& key, const QString& secret, Done done) = 0;
    virtual void erase(const QString& key, Done done) = 0;
};

} // namespace weir::remote
