#pragma once
// Named starting points for conversations: a system prompt and the sampling
// settings (the keys of ChatController::currentSettings: systemPrompt,
// temperature, topP, topK, minP, repeatPenalty, maxTokens). Made from a
// conversation's settings, applied to a new or an open one. Kept in the app's
// settings file (group "presets"), so they survive restarts.
#include <QObject>
#include <QSettings>
#include <QStringList>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

namespace weir::desktop {

class ConversationPresets : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("ConversationPresets comes from AppSettings")
    // Preset names, sorted case-insensitively.
    Q_PROPERTY(QStringList names READ names NOTIFY changed)

public:
    ConversationPresets(QSettings& store, QObject* parent = nullptr);

    QStringList names() const;
    // Saves `settings` (other keys than the preset's are ignored; seed is not
    // kept) under `name`, replacing a preset of that name. Returns "" or why
    // nothing was saved (an empty name, a value that is not a number).
    Q_INVOKABLE QString save(const QString& name, const QVariantMap& settings);
    // The preset's settings, or an empty map when there is none of that name.
    Q_INVOKABLE QVariantMap preset(const QString& name) const;
    Q_INVOKABLE bool contains(const QString& name) const { return names().contains(name.trimmed()); }
    Q_INVOKABLE void remove(const QString& name);

    // The settings keys a preset holds.
    static const QStringList& keys();

signals:
    void changed();

private:
    QSettings& store_;
};

} // namespace weir::desktop
