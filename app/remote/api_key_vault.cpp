#include "app/remote/api_key_vault.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QTimer>

#include "app/remote/system_keyring.h"

namespace weir::remote {

namespace {

constexpr QFileDevice::Permissions kOwnerOnly = QFileDevice::ReadOwner | QFileDevice::WriteOwner;
constexpr QFileDevice::Permissions kOthers = QFileDevice::ReadGroup | QFileDevice::WriteGroup | QFileDevice::ExeGroup |
                                             QFileDevice::ReadOther | QFileDevice::WriteOther | QFileDevice::ExeOther;
const QString kProbeKey = QStringLiteral("weir-keyring-probe");

void fail(QString* error, const QString& message) {
    if (error) *error = message;
}

void finish(const ApiKeyVault::SaveDone& done, const QString& error) {
    if (done) done(error);
}

QString duration(int ms) {
    return ms % 1000 == 0 ? QStringLiteral("%1 s").arg(ms / 1000) : QStringLiteral("%1 ms").arg(ms);
}

} // namespace

ApiKeyVault::ApiKeyVault(const QString& filePath, const QString& service, Keyring keyring)
    : path_(filePath), keyringState_(State::Untried) {
    if (keyring == Keyring::Never) {
        keyringState_ = State::Unavailable;
        keyringProblem_ = QStringLiteral("the keyring is turned off for this store");
        return;
    }
    QString why;
    keyring_ = makeSystemKeyring(service, &why);
    if (!keyring_) {
        keyringState_ = State::Unavailable;
        keyringProblem_ = why;
    }
}

ApiKeyVault::ApiKeyVault(const QString& filePath, std::unique_ptr<KeyringBackend> keyring)
    : path_(filePath), keyring_(std::move(keyring)), keyringState_(keyring_ ? State::Untried : State::Unavailable) {
    if (!keyring_) keyringProblem_ = QStringLiteral("the keyring is turned off for this store");
}

// Answers still on their way find the vault gone (alive_) and do nothing.
ApiKeyVault::~ApiKeyVault() = default;

bool ApiKeyVault::load(QString* error) {
    fileKeys_.clear();
    QFile f(path_);
    if (f.exists()) {
        if (!f.open(QIODevice::ReadOnly)) {
            fail(error, QStringLiteral("Cannot read %1: %2").arg(path_, f.errorString()));
            return false;
        }
        QJsonParseError pe;
        const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
        if (pe.error != QJsonParseError::NoError || !doc.isObject()) {
            fail(error, QStringLiteral("%1 is damaged (%2)").arg(path_, pe.error != QJsonParseError::NoError ? pe.errorString()
                                                                                                           : QStringLiteral("not a JSON object")));
            return false;
        }
        const QJsonObject o = doc.object();
        for (auto it = o.begin(); it != o.end(); ++it) fileKeys_.append({it.key(), it.value().toString()});
        if (f.permissions() & kOthers) f.setPermissions(kOwnerOnly);
    }
    startProbe();
    return true;
}

void ApiKeyVault::keyringFailed(const QString& why) {
    const bool changed = keyringState_ != State::Unavailable;
    keyringState_ = State::Unavailable;
    keyringProblem_ = why;
    if (changed && storageChanged_) storageChanged_();
}

void ApiKeyVault::enqueue(std::function<void(Step)> work) {
    startProbe();
    queue_.push_back(std::move(work));
    if (!running_) runNext();
}

void ApiKeyVault::runNext() {
    if (queue_.empty()) {
        running_ = false;
        return;
    }
    running_ = true;
    std::function<void(Step)> work = std::move(queue_.front());
    queue_.pop_front();
    // A caller's callback may have deleted the vault by the time the step ends.
    work([this, alive = std::weak_ptr<bool>(alive_)] {
        if (!alive.expired()) runNext();
    });
}

void ApiKeyVault::ask(std::function<void(KeyringBackend::Done)> call, KeyringBackend::Done done) {
    auto settled = std::make_shared<bool>(false);
    auto once = [settled, alive = std::weak_ptr<bool>(alive_), done = std::move(done)](const KeyringReply& r) {
        if (*settled || alive.expired()) return;
        *settled = true;
        done(r);
    };
    QTimer::singleShot(waitMs_, &timers_, [once, ms = waitMs_] {
        once(KeyringReply::failed(QStringLiteral("it did not answer within %1").arg(duration(ms))));
    });
    call(once);
}

void ApiKeyVault::startProbe() {
    if (probeStarted_ || keyringState_ != State::Untried || !keyring_) return;
    probeStarted_ = true;
    // The first step of the queue: a read of an entry nobody wrote, where
    // "not found" means the keyring answers. Until then keys wait in line.
    queue_.push_front([this](Step next) {
        ask([this](KeyringBackend::Done d) { keyring_->read(kProbeKey, std::move(d)); },
            [this, next](const KeyringReply& r) {
                if (r.status == KeyringReply::Status::Failed) {
                    keyringFailed(QStringLiteral("the system keyring is not available: %1").arg(r.problem));
                } else {
                    keyringState_ = State::Works;
                    if (storageChanged_) storageChanged_();
                }
                next();
            });
    });
    if (!running_) runNext();
}

std::optional<QString> ApiKeyVault::known(const QString& name) const {
    if (auto it = known_.constFind(name); it != known_.constEnd()) return *it;
    for (const auto& k : fileKeys_)
        if (k.first == name) return k.second;
    if (keyringState_ == State::Unavailable) return QString();  // no keyring: none stored anywhere
    return std::nullopt;
}

void ApiKeyVault::read(const QString& name, QObject* context, ReadDone done) {
    if (const std::optional<QString> key = known(name)) {
        done({true, *key, {}});
        return;
    }
    const bool hasContext = context != nullptr;
    enqueue([this, name, context = QPointer<QObject>(context), hasContext, done = std::move(done)](Step next) {
        readNow(name, [context, hasContext, done, next](const KeyRead& r) {
            if (!hasContext || context) done(r);
            next();
        });
    });
}

void ApiKeyVault::readNow(const QString& name, ReadDone done) {
    // Known by now: a write went first, or the keyring failed and the file took over.
    if (const std::optional<QString> key = known(name)) return done({true, *key, {}});
    ask([this, name](KeyringBackend::Done d) { keyring_->read(name, std::move(d)); },
        [this, name, done](const KeyringReply& r) {
            switch (r.status) {
            case KeyringReply::Status::Ok:
                known_.insert(name, r.value);
                return done({true, r.value, {}});
            case KeyringReply::Status::NotFound:
                known_.insert(name, QString());
                return done({true, QString(), {}});
            case KeyringReply::Status::Failed:
                // Not remembered: the next read asks again.
                return done({false, QString(), r.problem});
            }
        });
}

void ApiKeyVault::write(const QString& name, const QString& key, SaveDone done) {
    if (key.isEmpty()) return erase(name, std::move(done));
    const std::optional<QString> before = known_.contains(name) ? std::optional<QString>(known_.value(name)) : std::nullopt;
    known_.insert(name, key);
    enqueue([this, name, key, before, done = std::move(done)](Step next) {
        writeNow(name, key, [this, name, before, done, next](const QString& error) {
            if (!error.isEmpty()) {
                if (before) known_.insert(name, *before);
                else known_.remove(name);
            }
            finish(done, error);
            next();
        });
    });
}

void ApiKeyVault::writeNow(const QString& name, const QString& key, SaveDone done) {
    if (keyringState_ != State::Works) {
        QString error;
        putInFile(name, key, &error);
        return done(error);
    }
    ask([this, name, key](KeyringBackend::Done d) { keyring_->write(name, key, std::move(d)); },
        [this, name, key, done](const KeyringReply& r) {
            QString error;
            if (r.status == KeyringReply::Status::Ok) {
                dropFromFile(name, &error);  // no second copy in the file
                return done(error);
            }
            keyringFailed(QStringLiteral("the system keyring refused the key: %1").arg(r.problem));
            putInFile(name, key, &error);
            done(error);
        });
}

void ApiKeyVault::erase(const QString& name, SaveDone done) {
    known_.insert(name, QString());
    enqueue([this, name, done = std::move(done)](Step next) {
        eraseNow(name, [done, next](const QString& error) {
            finish(done, error);
            next();
        });
    });
}

void ApiKeyVault::eraseNow(const QString& name, SaveDone done) {
    if (keyringState_ != State::Works) {
        QString error;
        dropFromFile(name, &error);
        return done(error);
    }
    // "Not found" is fine: the key may be in the file, or nowhere.
    ask([this, name](KeyringBackend::Done d) { keyring_->erase(name, std::move(d)); },
        [this, name, done](const KeyringReply&) {
            QString error;
            dropFromFile(name, &error);
            done(error);
        });
}

void ApiKeyVault::rename(const QString& from, const QString& to, SaveDone done) {
    if (from == to) return finish(done, {});
    const std::optional<QString> key = known(from);
    if (key && key->isEmpty()) return finish(done, {});
    if (key) {  // seen under its new name at once
        known_.insert(to, *key);
        known_.insert(from, QString());
    }
    enqueue([this, from, to, key, done = std::move(done)](Step next) {
        // The key goes under its new name, and only then leaves the old one.
        auto move = [this, from, to, done, next](const QString& k) {
            writeNow(to, k, [this, from, to, k, done, next](const QString& error) {
                if (!error.isEmpty()) {
                    known_.remove(to);
                    known_.insert(from, k);
                    finish(done, error);
                    return next();
                }
                known_.insert(to, k);
                known_.insert(from, QString());
                eraseNow(from, [done, next](const QString& e) {
                    finish(done, e);
                    next();
                });
            });
        };
        if (key) return move(*key);
        readNow(from, [done, next, move](const KeyRead& r) {
            if (!r.ok || r.key.isEmpty()) {
                finish(done, r.ok ? QString() : r.problem);
                return next();
            }
            move(r.key);
        });
    });
}

QString ApiKeyVault::storageDescription() const {
    if (keyringState_ == State::Works) return QStringLiteral("in the system keyring");
    if (checkingKeyring()) return QStringLiteral("in the system keyring if it answers (asking it now), else in %1").arg(path_);
    return QStringLiteral("in %1, readable only by you (%2)")
        .arg(path_, keyringProblem_.isEmpty() ? QStringLiteral("the keyring was not tried yet") : keyringProblem_);
}

bool ApiKeyVault::putInFile(const QString& name, const QString& key, QString* error) {
    const auto before = fileKeys_;
    fileKeys_.removeIf([&](const auto& k) { return k.first == name; });
    fileKeys_.append({name, key});
    if (!saveFile(error)) {
        fileKeys_ = before;
        return false;
    }
    return true;
}

bool ApiKeyVault::dropFromFile(const QString& name, QString* error) {
    const auto before = fileKeys_;
    if (fileKeys_.removeIf([&](const auto& k) { return k.first == name; }) == 0) return true;
    if (!saveFile(error)) {
        fileKeys_ = before;
        return false;
    }
    return true;
}

bool ApiKeyVault::saveFile(QString* error) const {
    if (!QDir().mkpath(QFileInfo(path_).absolutePath())) {
        fail(error, QStringLiteral("Cannot create %1").arg(QFileInfo(path_).absolutePath()));
        return false;
    }
    QJsonObject o;
    for (const auto& k : fileKeys_) o.insert(k.first, k.second);
    QSaveFile f(path_);
    if (!f.open(QIODevice::WriteOnly)) {
        fail(error, QStringLiteral("Cannot write %1: %2").arg(path_, f.errorString()));
        return false;
    }
    // Private before the first byte: a key never sits in a file others can read.
    if (!f.setPermissions(kOwnerOnly)) {
        f.cancelWriting();
        fail(error, QStringLiteral("Cannot make %1 private to you").arg(path_));
        return false;
    }
    f.write(QJsonDocument(o).toJson(QJsonDocument::Indented));
    if (!f.commit()) {
        fail(error, QStringLiteral("Cannot write %1: %2").arg(path_, f.errorString()));
        return false;
    }
    return true;
}

} // namespace weir::remote
