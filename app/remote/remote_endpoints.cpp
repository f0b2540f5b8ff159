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
                              o.value(QStringLiteral("model")).toString()};
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

bool RemoteEndpointStore::add(const RemoteEndpointEntry& e, const QString& apiKey, QString* error) {
    if (!validate(e, error)) return false;
    if (find(e.name)) {
        fail(error, QStringLiteral("there is already an endpoint named “%1”").arg(e.name));
        return false;
    }
    entries_.append(e);
    if (!saveList(error)) {
        entries_.removeLast();
        return false;
    }
    return apiKey.isEmpty() || setApiKey(e.name, apiKey, error);
}

bool RemoteEndpointStore::update(const QString& name, const RemoteEndpointEntry& e, QString* error) {
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
    entries_[at] = e;
    if (!saveList(error)) {
        entries_ = before;
        return false;
    }
    return vault_.rename(name, e.name, error);   // a renamed endpoint keeps its key
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

bool RemoteEndpointStore::setApiKey(const QString& name, const QString& apiKey, QString* error) {
    if (!find(name)) {
        fail(error, QStringLiteral("there is no endpoint named “%1”").arg(name));
        return false;
    }
    return vault_.write(name, apiKey, error);
}

bool RemoteEndpointStore::remove(const QString& name, QString* error) {
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
    return vault_.erase(name, error);
}

QString RemoteEndpointStore::apiKey(const QString& name) const { return vault_.read(name); }

bool RemoteEndpointStore::saveList(QString* error) const {
    if (!QDir().mkpath(folder_)) {
        fail(error, QStringLiteral("Cannot create %1").arg(folder_));
        return false;
    }
    QJsonArray list;
    for (const RemoteEndpointEntry& e : entries_)
        list.append(QJsonObject{{QStringLiteral("name"), e.name},
                                {QStringLiteral("base_url"), e.baseUrl.toString()},
                                {QStringLiteral("model"), e.model}});
    QString why;
    if (!writeJson(listPath(), {{QStringLiteral("endpoints"), list}}, &why)) {
        fail(error, why);
        return false;
    }
    return true;
}

} // namespace weir::remote
