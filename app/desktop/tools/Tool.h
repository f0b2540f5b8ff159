#pragma once
// One tool the model may call: its name, what it does, the JSON Schema of its
// arguments, and the work itself. run() is called on a worker thread (the
// registry puts it on a QThreadPool), never on the GUI thread, so it may take
// its time; it must not touch the tool's state without a lock (const).
#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

namespace weir::desktop {

struct ToolResult {
    bool ok = true;
    QString text;   // what the model reads back (the output, or why it failed)
};

class Tool {
public:
    virtual ~Tool() = default;
    virtual QString name() const = 0;
    virtual QString description() const = 0;
    // JSON Schema of the arguments as JSON text: {"type": "object",
    // "properties": ..., "required": ...}. Text, because a QJsonObject sorts
    // its keys: the properties are offered to the model, and a forced call
    // writes them, in the order given here.
    virtual QByteArray parametersJson() const = 0;
    QJsonObject parameters() const { return QJsonDocument::fromJson(parametersJson()).object(); }
    // Calls that change something outside Weir (writing a file, a shell
    // command) are asked about on every run, whatever the tool's policy says.
    virtual bool alwaysAsks() const { return false; }
    // The arguments were checked against parameters() before this is called.
    virtual ToolResult run(const QJsonObject& arguments) const = 0;
};

} // namespace weir::desktop
