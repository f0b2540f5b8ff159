#include "app/remote/api_key_vault.h"

#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QTimer>
#include <memory>

#ifdef WEIR_HAVE_QTKEYCHAIN
#include <qt6keychain/keychain.h>
#endif

namespace weir::remote {

namespace {

constexpr QFileDevice::Permissions kOwnerOnly = QFileDevice::ReadOwner | QFileDevice::WriteOwner;
constexpr QFileDevice::Permissions kOthers = QFileDevice::ReadGroup | QFileDevice::WriteGroup | QFileDevice::ExeGroup |
                                             QFileDevice::ReadOther | QFileDevice::WriteOther | QFileDevice::ExeOther;

void fail(QString* error, const QString& message) {
    if (error) *error = message;
}

#ifdef WEIR_HAVE_QTKEYCHAIN
struct KeyringAnswer {
    bool done = false;
    QKeychain::Error error = QKeychain::NoError;
    QString errorText, value;
};

// Runs one job to its end (or kKeyringWaitMs); the job deletes itself.
template <class Job>
KeyringAnswer runJob(Job* job) {
    auto answer = std::make_shared<KeyringAnswer>();
    QEventLoop loop;
    QObject::connect(job, &QKeychain::Job::finished, &loop, [answer, &loop](QKeychain::Job* j) {
        answer->done = true;
        answer->error = j->error();
        answer->errorText = j->errorString();
        if (auto* r = qobject_cast<QKeychain::ReadPasswordJob*>(j)) answer->value = r->textData();
        loop.quit();
    });
    job->setAutoDelete(true);
    job->start();
    if (!answer->done) {
        QTimer::singleShot(ApiKeyVault::kKeyringWaitMs, &loop, &QEventLoop::quit);
        loop.exec();
    }
    if (!answer->done) {
        answer->error = QKeychain::OtherError;
        answer->errorText = QStringLiteral("it did not answer within %1 s").arg(ApiKeyVault::kKeyringWaitMs / 1000);
    }
    return *answer;
}

// QtKeychain's own text is often just "Unknown error"; say what it means.
QString describe(const KeyringAnswer& a) {
    const bool vague = a.errorText.isEmpty() || a.errorText == QLatin1String("Unknown error");
    switch (a.error) {
    case QKeychain::NoBackendAvailable:
        return QStringLiteral("no keyring service answers (Secret Service or KWallet over D-Bus)");
    case QKeychain::AccessDeniedByUser:
    case QKeychain::AccessDenied:
        return QStringLiteral("access to the keyring was refused");
    case QKeychain::NotImplemented:
        return QStringLiteral("this system has no keyring QtKeychain can use");
    default:
        if (!vague) return a.errorText;
        if (qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS"))
            return QStringLiteral("no D-Bus session, so no keyring service can answer");
        return QStringLiteral("no keyring service answers (QtKeychain error %1)").arg(int(a.error));
    }
}
#endif

} // namespace

ApiKeyVault::ApiKeyVault(const QString& filePath, const QString& service, Keyring keyring)
    : path_(filePath), service_(service), keyringState_(State::Untried) {
#ifdef WEIR_HAVE_QTKEYCHAIN
    if (keyring == Keyring::Never) {
        keyringState_ = State::Unavailable;
        keyringProblem_ = QStringLiteral("the keyring is turned off for this store");
    }
#else
    Q_UNUSED(keyring);
    keyringState_ = State::Unavailable;
    keyringProblem_ = QStringLiteral("this Weir was built without QtKeychain");
#endif
}

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
    probeKeyring();
    return true;
}

void ApiKeyVault::keyringFailed(const QString& why) {
    keyringState_ = State::Unavailable;
    keyringProblem_ = why;
}

void ApiKeyVault::probeKeyring() {
#ifdef WEIR_HAVE_QTKEYCHAIN
    if (keyringState_ != State::Untried) return;
    // A read of an entry nobody wrote: "not found" means the keyring answers.
    auto* job = new QKeychain::ReadPasswordJob(service_);
    job->setKey(QStringLiteral("weir-keyring-probe"));
    const KeyringAnswer a = runJob(job);
    if (a.error == QKeychain::NoError || a.error == QKeychain::EntryNotFound) keyringState_ = State::Works;
    else keyringFailed(QStringLiteral("the system keyring is not available: %1").arg(describe(a)));
#endif
}

QString ApiKeyVault::read(const QString& name) {
    for (const auto& k : fileKeys_)
        if (k.first == name) return k.second;
#ifdef WEIR_HAVE_QTKEYCHAIN
    if (keyringState_ == State::Works) {
        auto* job = new QKeychain::ReadPasswordJob(service_);
        job->setKey(name);
        const KeyringAnswer a = runJob(job);
        if (a.error == QKeychain::NoError) return a.value;
    }
#endif
    return {};
}

bool ApiKeyVault::write(const QString& name, const QString& key, QString* error) {
    if (key.isEmpty()) return erase(name, error);
    probeKeyring();
#ifdef WEIR_HAVE_QTKEYCHAIN
    if (keyringState_ == State::Works) {
        auto* job = new QKeychain::WritePasswordJob(service_);
        job->setKey(name);
        job->setTextData(key);
        const KeyringAnswer a = runJob(job);
        if (a.error == QKeychain::NoError) {
            // No second copy in the file.
            if (fileKeys_.removeIf([&](const auto& k) { return k.first == name; }) > 0) return saveFile(error);
            return true;
        }
        keyringFailed(QStringLiteral("the system keyring refused the key: %1").arg(describe(a)));
    }
#endif
    const auto before = fileKeys_;
    fileKeys_.removeIf([&](const auto& k) { return k.first == name; });
    fileKeys_.append({name, key});
    if (!saveFile(error)) {
        fileKeys_ = before;
        return false;
    }
    return true;
}

bool ApiKeyVault::erase(const QString& name, QString* error) {
#ifdef WEIR_HAVE_QTKEYCHAIN
    if (keyringState_ == State::Works) {
        auto* job = new QKeychain::DeletePasswordJob(service_);
        job->setKey(name);
        runJob(job);   // "not found" is fine: the key may be in the file
    }
#endif
    const auto before = fileKeys_;
    if (fileKeys_.removeIf([&](const auto& k) { return k.first == name; }) == 0) return true;
    if (!saveFile(error)) {
        fileKeys_ = before;
        return false;
    }
    return true;
}

bool ApiKeyVault::rename(const QString& from, const QString& to, QString* error) {
    if (from == to) return true;
    const QString key = read(from);
    if (key.isEmpty()) return true;
    return write(to, key, error) && erase(from, error);
}

QString ApiKeyVault::storageDescription() const {
    if (keyringState_ == State::Works) return QStringLiteral("in the system keyring");
    return QStringLiteral("in %1, readable only by you (%2)")
        .arg(path_, keyringProblem_.isEmpty() ? QStringLiteral("the keyring was not tried yet") : keyringProblem_);
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
