#pragma once
// The models Weir knows how to install (resources/models.json, embedded as
// :/models.json): for the Model page, each with where it was found in the
// model folders (app/locations), so a first start without a model can offer
// the ones that are there and say how to get the others.
#include <QString>
#include <QVariantList>

namespace weir::desktop {

// One map per model: id, name, file, architecture, quantization,
// parameters, licence, licenceUrl, role ("default", "tests"), path (where
// it was found, "" when not installed). Empty when the catalogue cannot be
// read.
QVariantList bundledModels(const QString& catalogueFile = QStringLiteral(":/models.json"));

// The catalogue's name for a model file ("SmolLM2 135M Instruct" rather than
// the file's general.name), or "" for a file the catalogue does not list.
QString catalogueName(const QString& fileName, const QString& catalogueFile = QStringLiteral(":/models.json"));

} // namespace weir::desktop
