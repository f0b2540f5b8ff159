#include "engine/models/model_metadata.h"

#include "weir/base/error.h"

namespace weir {

int64_t ModelMetadata::requireInt(std::string_view suffix) const {
    const std::string k = key(suffix);
    const gguf::Value* v = file_.find(k);
    if (!v) throw Error(file_.path() + ": missing metadata key " + k);
    const auto i = v->asInt();
    if (!i) throw Error(file_.path() + ": metadata key " + k + " is not an integer (" + valueTypeName(v->type) + ")");
    return *i;
}

int64_t ModelMetadata::intOr(std::string_view suffix, int64_t def) const {
    const std::string k = key(suffix);
    const gguf::Value* v = file_.find(k);
    if (!v) return def;
    const auto i = v->asInt();
    if (!i) throw Error(file_.path() + ": metadata key " + k + " is not an integer (" + valueTypeName(v->type) + ")");
    return *i;
}

double ModelMetadata::floatOr(std::string_view suffix, double def) const {
    const std::string k = key(suffix);
    const gguf::Value* v = file_.find(k);
    if (!v) return def;
    const auto f = v->asFloat();
    if (!f) throw Error(file_.path() + ": metadata key " + k + " is not a number (" + valueTypeName(v->type) + ")");
    return *f;
}

std::optional<std::string> ModelMetadata::string(std::string_view suffix) const {
    return file_.getString(key(suffix));
}

} // namespace weir
