#include "settings/ConversationPresets.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cmath>

namespace weir::desktop {
namespace {

// Each preset is one JSON object under presets/<index>; the name is inside, so
// any text (slashes included) can name a preset.
const QString kGroup = QStringLiteral("presets");

} // namespace

ConversationPresets::ConversationPresets(QSettings& store, QObject* parent) : QObject(parent), store_(store) {}

const QStringList& ConversationPresets::keys() {
    static const QStringList k{QStringLiteral("systemPrompt"), QStringLiteral("temperature"), QStringLiteral("topP"),
                               QStringLiteral("topK"),         QStringLiteral("minP"),        QStringLiteral("repeatPenalty"),
                               QStringLiteral("maxTokens")};
    return k;
}

static QList<QJsonObject> readAll(QSettings& store) {
    QList<QJsonObject> out;
    const int n = store.beginReadArray(kGroup);
    for (int i = 0; i < n; ++i) {
        store.setArrayIndex(i);
        const QJsonObject o = QJsonDocument::fromJson(store.value(QStringLiteral("json")).toByteArray()).object();
        if (!o.value(QStringLiteral("name")).toString().trimmed().isEmpty()) out << o;
    }
    store.endArray();
    return out;
}

static void writeAll(QSettings& store, QList<QJsonObject> presets) {
    std::sort(presets.begin(), presets.end(), [](const QJsonObject& a, const QJsonObject& b) {
        return a.value(QStringLiteral("name")).toString().compare(b.value(QStringLiteral("name")).toString(),
                                                                  Qt::CaseInsensitive) < 0;
    });
    store.remove(kGroup);
    store.beginWriteArray(kGroup, int(presets.size()));
    for (int i = 0; i < presets.size(); ++i) {
        store.setArrayIndex(i);
        store.setValue(QStringLiteral("json"), QJsonDocument(presets[i]).toJson(QJsonDocument::Compact));
    }
    store.endArray();
}

QStringList ConversationPresets::names() const {
    QStringList out;
    for (const QJsonObject& o : readAll(store_)) out << o.value(QStringLiteral("name")).toString();
    return out;
}

QString ConversationPresets::save(const QString& name, const QVariantMap& settings) {
    const QString n = name.trimmed();
    if (n.isEmpty()) return tr("A preset needs a name.");
    QJsonObject o{{QStringLiteral("name"), n}};
    for (const QString& key : keys()) {
        if (!settings.contains(key)) continue;
        const QVariant v = settings.value(key);
        if (key == QLatin1String("systemPrompt")) {
            o.insert(key, v.toString());
            continue;
        }
        bool ok = false;
        const double d = v.toDouble(&ok);
        if (!ok || !std::isfinite(d)) return tr("The preset was not saved: %1 is not a number (%2).").arg(key, v.toString());
        o.insert(key, d);
    }
    QList<QJsonObject> all = readAll(store_);
    all.erase(std::remove_if(all.begin(), all.end(),
                             [&](const QJsonObject& p) { return p.value(QStringLiteral("name")).toString() == n; }),
              all.end());
    all << o;
    writeAll(store_, all);
    emit changed();
    return {};
}

QVariantMap ConversationPresets::preset(const QString& name) const {
    for (const QJsonObject& o : readAll(store_)) {
        if (o.value(QStringLiteral("name")).toString() != name.trimmed()) continue;
        QVariantMap m = o.toVariantMap();
        m.remove(QStringLiteral("name"));
        return m;
    }
    return {};
}

void ConversationPresets::remove(const QString& name) {
    QList<QJsonObject> all = readAll(store_);
    const auto before = all.size();
    all.erase(std::remove_if(all.begin(), all.end(),
                             [&](const QJsonObject& p) { return p.value(QStringLiteral("name")).toString() == name.trimmed(); }),
              all.end());
    if (all.size() == before) return;
    writeAll(store_, all);
    emit changed();
}

} // namespace weir::desktop
