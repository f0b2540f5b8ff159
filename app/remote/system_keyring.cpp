#include "app/remote/system_keyring.h"

#include <QTimer>

#ifdef WEIR_HAVE_QTKEYCHAIN
#include <qt6keychain/keychain.h>
#endif

namespace weir::remote {

#ifdef WEIR_HAVE_QTKEYCHAIN
namespace {

// QtKeychain's own text is often just "Unknown error"; say what it means.
QString describe(QKeychain::Error error, const QString& text) {
    const bool vague = text.isEmpty() || text == QLatin1String("Unknown error");
    switch (error) {
    case QKeychain::NoBackendAvailable:
        return QStringLiteral("no keyring service answers (Secret Service or KWallet over D-Bus)");
    case QKeychain::AccessDeniedByUser:
    case QKeychain::AccessDenied:
        return QStringLiteral("access to the keyring was refused");
    case QKeychain::NotImplemented:
        return QStringLiteral("this system has no keyring QtKeychain can use");
    default:
        if (!vague) return text;
        if (qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS"))
            return QStringLiteral("no D-Bus session, so no keyring service can answer");
        return QStringLiteral("no keyring service answers (QtKeychain error %1)").arg(int(error));
    }
}

// Starts `job` on the next turn of the event loop (so no answer comes from
// inside the call) and answers `done` when it finishes. The job is a child of
// `owner`: it goes with it, and then nobody is answered.
void run(QObject* owner, QKeychain::Job* job, KeyringBackend::Done done) {
    job->setAutoDelete(true);
    QObject::connect(job, &QKeychain::Job::finished, owner, [done = std::move(done)](QKeychain::Job* j) {
        if (j->error() == QKeychain::NoError) {
            const auto* r = qobject_cast<QKeychain::ReadPasswordJob*>(j);
            done(KeyringReply::ok(r ? r->textData() : QString()));
        } else if (j->error() == QKeychain::EntryNotFound) {
            done(KeyringReply::notFound());
        } else {
            done(KeyringReply::failed(describe(j->error(), j->errorString())));
        }
    });
    QTimer::singleShot(0, job, [job] { job->start(); });
}

} // namespace
#else
namespace {

// A build without QtKeychain answers every call, on the next turn, with why.
void refuse(QObject* owner, KeyringBackend::Done done) {
    QTimer::singleShot(0, owner, [done = std::move(done)] {
        done(KeyringReply::failed(QStringLiteral("this Weir was built without QtKeychain")));
    });
}

} // namespace
#endif

SystemKeyring::SystemKeyring(const QString& service) : service_(service) {}

void SystemKeyring::read(const QString& key, Done done) {
#ifdef WEIR_HAVE_QTKEYCHAIN
    auto* job = new QKeychain::ReadPasswordJob(service_, this);
    job->setKey(key);
    run(this, job, std::move(done));
#else
    Q_UNUSED(key);
    refuse(this, std::move(done));
#endif
}

void SystemKeyring::write(const QString& key, const QString& secret, Done done) {
#ifdef WEIR_HAVE_QTKEYCHAIN
    auto* job = new QKeychain::WritePasswordJob(service_, this);
    job->setKey(key);
    job->setTextData(secret);
    run(this, job, std::move(done));
#else
    Q_UNUSED(key);
    Q_UNUSED(secret);
    refuse(this, std::move(done));
#endif
}

void SystemKeyring::erase(const QString& key, Done done) {
#ifdef WEIR_HAVE_QTKEYCHAIN
    auto* job = new QKeychain::DeletePasswordJob(service_, this);
    job->setKey(key);
    run(this, job, std::move(done));
#else
    Q_UNUSED(key);
    refuse(this, std::move(done));
#endif
}

std::unique_ptr<KeyringBackend> makeSystemKeyring(const QString& service, QString* why) {
#ifdef WEIR_HAVE_QTKEYCHAIN
    Q_UNUSED(why);
    return std::make_unique<SystemKeyring>(service);
#else
    Q_UNUSED(service);
    if (why) *why = QStringLiteral("this Weir was built without QtKeychain");
    return nullptr;
#endif
}

} // namespace weir::remote
