#pragma once
// Checks a call's arguments against the tool's JSON Schema before it runs, so
// a tool never sees a missing or mistyped field. The subset tools use: type
// (object, string, number, integer, boolean, array), properties, required,
// enum, additionalProperties: false. Returns "" when valid, else the first
// problem with where it is ("arguments.path: expected a string").
#include <QJsonObject>
#include <QJsonValue>
#include <QString>

namespace weir::desktop {

QString validateArguments(const QJsonValue& arguments, const QJsonObject& schema);

// The model's argument text as an object; "" or "{}" is an empty one. On a
// parse error returns false with `error` naming it.
bool parseArguments(const QString& text, QJsonObject* out, QString* error);

} // namespace weir::desktop
