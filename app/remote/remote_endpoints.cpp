#include "app/remote/remote_endpoints.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace weir::remote {

namespace {

bool readJson(const QString& path, QJsonObject* out, QString* error) {
    QFile f(path);
    if (!f.exists()) return true;   // nothing saved yet
    if (!f.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("Cannot read %1: %2").arg(path, f.errorString());
        return false;
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
    if (pe.error != QJsonParseError::NoError || !doc.isObject()) {
        *error = pe.error != QJsonParseError::NoError
                     ? QStringLiteral("%1 is damaged (%2 at byte %3)").arg(path, pe.errorString()).arg(pe.offset)
                     : QStringLiteral("%1 is damaged (not a JSON object)").arg(path);
        return false;
    }
    *out = doc.object();
    return true;
}

bool writeJson(const QString& path, const QJsonObject& o, QString* error) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        *error = QStringLiteral("Cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    f.write(QJsonDocument(o).toJson(QJsonDocument::Indented));
    if (!f.commit()) {
        *error = QStringLiteral("Cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

void fail(QString* error, const QString& message) {
    if (error) *error = message;
}

} // namespace

RemoteEndpointStore::RemoteEndpointStore(const QString& folder, ApiKeyVault::Keyring keyring, const QString& keyringService)
    : folder_(folder), vault_(QDir(folder).filePath(QStringLiteral("remote-endpoint-keys.json")), keyringService, keyring) {}

RemoteEndpointStore::RemoteEndpointStore(const QString& folder, std::unique_ptr<KeyringBackend> keyring)
    : folder_(folder), vault_(QDir(folder).filePath(QStringLiteral("remote-endpoint-keys.json")), std::move(keyring)) {}

QString RemoteEndpointStore::listPath() const { return QDir(folder_).filePath(QStringLiteral("remote-endpoints.json")); }
QString RemoteEndpointStore::keysPath() const { return vault_.filePath(); }

bool RemoteEndpointStore::load(QString* error) {
    entries_.clear();
    QJsonObject list;
    QString why;
    if (!readJson(listPath(), &list, &why)) {
        fail(error, why);
        return false;
    }
    QList<RemoteEndpointEntry> entries;
    for (const QJsonValue& v : list.value(QStringLiteral("endpoints")).toArray()) {
        const QJsonObject o = v.toObject();
        RemoteEndpointEntry e{o.value(QStringLiteral("name")).toString(), QUrl(o.value(QStringLiteral("base_url")).toString()),
                              o.value(QStringLiteral("model")).toString(), {}};
        for (const QJsonValue& former : o.value(QStringLiteral("former_names")).toArray())
            if (!former.toString().isEmpty()) e.formerNames << former.toString();
        if (!validate(e, &why)) {
            fail(error, QStringLiteral("%1 is damaged: %2").arg(listPath(), why));
            return false;
        }
        entries.append(e);
    }
    if (!vault_.load(error)) return false;
    entries_ = entries;
    return true;
}

const RemoteEndpointEntry* RemoteEndpointStore::find(const QString& name) const {
    for (const RemoteEndpointEntry& e : entries_)
        if (e.name == name) return &e;
    return nullptr;
}

const RemoteEndpointEntry* RemoteEndpointStore::resolve(const QString& name) const {
    if (const RemoteEndpointEntry* e = find(name)) return e;
    for (const RemoteEndpointEntry& e : entries_)
        if (e.formerNames.contains(name)) return &e;
    return nullptr;
}

bool RemoteEndpointStore::validate(const RemoteEndpointEntry& e, QString* error) {
    if (e.name.trimmed().isEmpty()) {
        fail(error, QStringLiteral("an endpoint needs a name"));
        return false;
    }
    const QString scheme = e.baseUrl.scheme();
    if (!e.baseUrl.isValid() || (scheme != QLatin1String("http") && scheme != QLatin1String("https")) || e.baseUrl.host().isEmpty()) {
        fail(error, QStringLiteral("“%1” is not an http:// or https:// address with a host (for example http://gpu-box:8000/v1)")
                        .arg(e.baseUrl.toString()));
        return false;
    }
    return true;
}

bool RemoteEndpointStore::add(const RemoteEndpointEntry& e, const QString& apiKey, QString* error, KeyDone keyDone) {
    if (!validate(e, error)) return false;
    if (find(e.name)) {
        fail(error, QStringLiteral("there is already an endpoint named “%1”").arg(e.name));
        return false;
    }
    const QList<RemoteEndpointEntry> before = entries_;
    // The name is this endpoint's now, no longer another's former one.
    for (RemoteEndpointEntry& other : entries_) other.formerNames.removeAll(e.name);
    entries_.append(e);
    entries_.last().formerNames.clear();
    if (!saveList(error)) {
        entries_ = before;
        return false;
    }
    if (apiKey.isEmpty()) {
        if (keyDone) keyDone({});
    } else {
        vault_.write(e.name, apiKey, std::move(keyDone));
    }
    return true;
}

bool RemoteEndpointStore::update(const QString& name, const RemoteEndpointEntry& e, QString* error, KeyDone keyDone) {
    if (!validate(e, error)) return false;
    qsizetype at = -1;
    for (qsizetype i = 0; i < entries_.size(); ++i)
        if (entries_[i].name == name) at = i;
    if (at < 0) {
        fail(error, QStringLiteral("there is no endpoint named “%1”").arg(name));
        return false;
    }
    if (e.name != name && find(e.name)) {
        fail(error, QStringLiteral("there is already an endpoint named “%1”").arg(e.name));
        return false;
    }
    const QList<RemoteEndpointEntry> before = entries_;
    RemoteEndpointEntry changed = e;
    changed.formerNames = entries_[at].formerNames;
    if (e.name != name) {
        for (RemoteEndpointEntry& other : entries_) other.formerNames.removeAll(e.name);
        changed.formerNames.removeAll(e.name);
        changed.formerNames.removeAll(name);
        changed.formerNames << name;
    }
    entries_[at] = changed;
    if (!saveList(error)) {
        entries_ = before;
        return false;
    }
    vault_.rename(name, e.name, std::move(keyDone));  // a renamed endpoint keeps its key
    return true;
}

bool RemoteEndpointStore::setModel(const QString& name, const QString& model, QString* error) {
    const RemoteEndpointEntry* e = find(name);
    if (!e) {
        fail(error, QStringLiteral("there is no endpoint named “%1”").arg(name));
        return false;
    }
    RemoteEndpointEntry changed = *e;
    changed.model = model;
    return update(name, changed, error);
}

bool RemoteEndpointStore::setApiKey(const QString& name, const QString& apiKey, QString* error, KeyDone keyDone) {
    if (!find(name)) {
        fail(error, QStringLiteral("there is no endpoint named “%1”").arg(name));
        return false;
    }
    vault_.write(name, apiKey, std::move(keyDone));
    return true;
}

bool RemoteEndpointStore::remove(const QString& name, QString* error, KeyDone keyDone) {
    if (!find(name)) {
        fail(error, QStringLiteral("there is no endpoint named “%1”").arg(name));
        return false;
    }
    const QList<RemoteEndpointEntry> before = entries_;
    entries_.removeIf([&](const RemoteEndpointEntry& e) { return e.name == name; });
    if (!saveList(error)) {
        entries_ = before;
        return false;
    }
    vault_.erase(name, std::move(keyDone));
    return true;
}

bool RemoteEndpointStore::saveList(QString* error) const {
    if (!QDir().mkpath(folder_)) {
        fail(error, QStringLiteral("Cannot create %1").arg(folder_));
        return false;
    }
    QJsonArray list;
    for (const RemoteEndpointEntry& e : entries_) {
        QJsonObject o{{QStringLiteral("name"), e.name}, {QStringLiteral("base_url"), e.baseUrl.toString()}, {QStringLiteral("model"), e.model}};
        if (!e.formerNames.isEmpty()) o.insert(QStringLiteral("former_names"), QJsonArray::fromStringList(e.formerNames));
        list.append(o);
    }
    QString why;
    if (!writeJson(listPath(), {{QStringLiteral("endpoints"), list}}, &why)) {
        fail(error, why);
        return false;
    }
    return true;
}

} // namespace weir::remote
