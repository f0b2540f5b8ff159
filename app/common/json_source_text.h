#pragma once
// The text of one value of a JSON request body, exactly as the client wrote
// it. QJsonObject keeps its keys sorted, so a JSON Schema read through it
// loses the order of its properties, which structured output must keep (the
// reply writes them in the schema's order, as OpenAI's does); the schema is
// taken from the body's own text instead.
#include <QByteArray>
#include <QByteArrayView>
#include <QJsonValue>
#include <QStringList>
#include <optional>

namespace weir::common {

// The value at `path` (object keys, outermost first) in `document`, a JSON
// text already parsed successfully (by QJsonDocument); nullopt when a key is
// missing or a step is not an object. Where an object repeats a key, its
// last value counts, as in QJsonDocument.
std::optional<QByteArray> jsonSourceText(QByteArrayView document, const QStringList& path);
// Item `index` of the array that `document` (valid JSON) is; nullopt when it
// is not an array or is shorter.
std::optional<QByteArray> jsonItemText(QByteArrayView document, qsizetype index);

// `value` as compact JSON text with each object's keys in the order of the
// matching object in `source` (the text it was read from, valid JSON, or
// empty), so that a schema or a call's arguments read through QJsonObject are
// written back in their own order. Keys `source` lacks (added since) follow
// in QJsonObject's order; a part whose shape differs from `source` is written
// in that order too.
QByteArray orderedJson(const QJsonValue& value, QByteArrayView source);

} // namespace weir::common
