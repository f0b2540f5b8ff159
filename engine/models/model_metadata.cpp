#include "engine/models/model_metadata.h"

#include <cmath>

#include "weir/base/error.h"

namespace weir {

namespace {

bool isIntegerType(gguf::ValueType t) {
    using T = gguf::ValueType;
    return t == T::U8 || t == T::I8 || t == T::U16 || t == T::I16 || t == T::U32 || t == T::I32 || t == T::U64 ||
           t == T::I64;
}

bool isFloatType(gguf::ValueType t) { return t == gguf::ValueType::F32 || t == gguf::ValueType::F64; }

} // namespace

void ModelMetadata::refuse(std::string_view suffix, const std::string& why) const {
    const std::string k = key(suffix);
    const gguf::Value* v = file_.find(k);
    throw Error(file_.path() + ": " + k + " = " + (v ? v->toDisplayString() : std::string("(missing)")) + ": " + why);
}

int64_t ModelMetadata::requireInt(std::string_view suffix) const {
    const std::string k = key(suffix);
    if (!file_.find(k)) throw Error(file_.path() + ": missing metadata key " + k);
    return intOr(suffix, 0);
}

int64_t ModelMetadata::intOr(std::string_view suffix, int64_t def) const {
    const gguf::Value* v = file_.find(key(suffix));
    if (!v) return def;
    if (!isIntegerType(v->type))
        refuse(suffix, std::string("stored as ") + valueTypeName(v->type) + ", expected an integer");
    return *v->asInt();
}

double ModelMetadata::floatOr(std::string_view suffix, double def) const {
    const gguf::Value* v = file_.find(key(suffix));
    if (!v) return def;
    if (!isFloatType(v->type))
        refuse(suffix, std::string("stored as ") + valueTypeName(v->type) + ", expected a float (f32 or f64)");
    const double f = *v->asFloat();
    if (!std::isfinite(float(f))) refuse(suffix, "must be a finite number");
    return f;
}

double ModelMetadata::positiveFloatOr(std::string_view suffix, double def) const {
    const gguf::Value* v = file_.find(key(suffix));
    if (!v) return def;
    if (!isFloatType(v->type))
        refuse(suffix, std::string("stored as ") + valueTypeName(v->type) + ", expected a float (f32 or f64)");
    const double f = *v->asFloat();
    if (!std::isfinite(float(f)) || !(float(f) > 0.0f)) refuse(suffix, "must be a finite positive number");
    return f;
}

std::optional<std::string> ModelMetadata::string(std::string_view suffix) const {
    return file_.getString(key(suffix));
}

} // namespace weir
