// describeModelFile: a GGUF file's metadata (long arrays abbreviated) and its
// tensor table with totals, as text or JSON (weir-cli inspect prints it).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/backend/cpu_backend.h"
#include "engine/models/model.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/ggml_types.h"
#include "weir/base/error.h"
#include "weir/base/json_string.h"
#include "weir/model_file.h"

namespace weir {
namespace {

// printf into a string.
template <typename... A>
void appendf(std::string& out, const char* format, A... args) {
    const int n = std::snprintf(nullptr, 0, format, args...);
    if (n <= 0) return;
    const size_t at = out.size();
    out.resize(at + size_t(n) + 1);
    std::snprintf(out.data() + at, size_t(n) + 1, format, args...);
    out.resize(at + size_t(n));
}

using gguf::Array;
using gguf::GgufFile;
using gguf::TensorInfo;
using gguf::Value;
using gguf::ValueType;

// "u32", "string[262144]", "array[4] of u8[3]"-style type label for the text table.
std::string typeLabel(const Value& v) {
    const Array* a = v.asArray();
    if (!a) return gguf::valueTypeName(v.type);
    std::string inner = gguf::valueTypeName(a->elementType);
    if (a->elementType == ValueType::Array) inner = "array";
    return inner + "[" + std::to_string(a->items.size()) + "]";
}

std::string shapeText(const TensorInfo& t) {
    std::string s = "[";
    for (uint32_t d = 0; d < t.nDims; ++d) s += (d ? ", " : "") + std::to_string(t.ne[d]);
    return s + "]";
}

const char* typeName(kernels::GgmlType type) {
    const kernels::TypeTraits* tr = kernels::typeTraits(type);
    return tr ? tr->name : "?";
}

// --- JSON output -----------------------------------------------------------

std::string jsonNumber(double v, bool single) {
    if (!std::isfinite(v)) return "null";  // JSON has no NaN or infinity
    char buf[64];
    const auto r = single ? std::to_chars(buf, buf + sizeof buf, float(v)) : std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string jsonValue(const Value& v, size_t maxItems) {
    switch (v.type) {
    case ValueType::F32: return jsonNumber(std::get<double>(v.data), true);
    case ValueType::F64: return jsonNumber(std::get<double>(v.data), false);
    case ValueType::Bool: return std::get<bool>(v.data) ? "true" : "false";
    case ValueType::String: return jsonString(std::get<std::string>(v.data));
    case ValueType::Array: {
        const Array& a = std::get<Array>(v.data);
        std::string out = "{\"element_type\": \"" + std::string(gguf::valueTypeName(a.elementType)) +
                          "\", \"count\": " + std::to_string(a.items.size()) + ", \"items\": [";
        const size_t shown = std::min(maxItems, a.items.size());
        for (size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + jsonValue(a.items[i], maxItems);
        out += "], \"truncated\": ";
        out += shown < a.items.size() ? "true}" : "false}";
        return out;
    }
    default: return v.toDisplayString();  // integers
    }
}

std::string describeJson(const GgufFile& f, size_t maxItems, uint64_t totalElements, uint64_t totalBytes) {
    std::string out = "{\n";
    out += "  \"path\": " + jsonString(f.path()) + ",\n";
    out += "  \"version\": " + std::to_string(f.version()) + ",\n";
    out += "  \"file_size\": " + std::to_string(f.fileSize()) + ",\n";
    out += "  \"alignment\": " + std::to_string(f.alignment()) + ",\n";
    out += "  \"data_offset\": " + std::to_string(f.dataOffset()) + ",\n";
    out += "  \"metadata\": [";
    for (size_t i = 0; i < f.metadata().size(); ++i) {
        const auto& kv = f.metadata()[i];
        out += i ? ",\n    " : "\n    ";
        out += "{\"key\": " + jsonString(kv.key) + ", \"type\": \"" + gguf::valueTypeName(kv.value.type) +
               "\", \"value\": " + jsonValue(kv.value, maxItems) + "}";
    }
    out += "\n  ],\n  \"tensors\": [";
    for (size_t i = 0; i < f.tensors().size(); ++i) {
        const TensorInfo& t = f.tensors()[i];
        std::string shape = "[";
        for (uint32_t d = 0; d < t.nDims; ++d) shape += (d ? ", " : "") + std::to_string(t.ne[d]);
        shape += "]";
        out += i ? ",\n    " : "\n    ";
        out += "{\"name\": " + jsonString(t.name) + ", \"type\": \"" + typeName(t.type) +
               "\", \"type_id\": " + std::to_string(static_cast<uint32_t>(t.type)) + ", \"shape\": " + shape +
               ", \"offset\": " + std::to_string(t.offset) + ", \"bytes\": " + std::to_string(t.nbytes) + "}";
    }
    out += "\n  ],\n  \"totals\": {\"tensors\": " + std::to_string(f.tensors().size()) +
           ", \"elements\": " + std::to_string(totalElements) + ", \"bytes\": " + std::to_string(totalBytes) + "}\n}\n";
    return out;
}

// --- text output -----------------------------------------------------------

std::string describeText(const GgufFile& f, size_t maxItems, uint64_t totalElements, uint64_t totalBytes) {
    std::string out;
    appendf(out, "%s\n", f.path().c_str());
    appendf(out, "GGUF version %u, %llu bytes, alignment %llu, tensor data at offset %llu\n\n", f.version(),
                (unsigned long long)f.fileSize(), (unsigned long long)f.alignment(),
                (unsigned long long)f.dataOffset());
    size_t keyWidth = 3;
    for (const auto& kv : f.metadata()) keyWidth = std::max(keyWidth, kv.key.size());
    keyWidth = std::min<size_t>(keyWidth, 60);
    appendf(out, "metadata (%zu keys):\n", f.metadata().size());
    for (const auto& kv : f.metadata())
        appendf(out, "  %-*s  %-14s  %s\n", int(keyWidth), kv.key.c_str(), typeLabel(kv.value).c_str(),
                    kv.value.toDisplayString(maxItems).c_str());

    size_t nameWidth = 4;
    for (const TensorInfo& t : f.tensors()) nameWidth = std::max(nameWidth, t.name.size());
    nameWidth = std::min<size_t>(nameWidth, 64);
    appendf(out, "\ntensors (%zu):\n", f.tensors().size());
    appendf(out, "  %-*s  %-6s  %-24s  %12s  %12s\n", int(nameWidth), "name", "type", "shape", "offset", "bytes");
    for (const TensorInfo& t : f.tensors())
        appendf(out, "  %-*s  %-6s  %-24s  %12llu  %12llu\n", int(nameWidth), t.name.c_str(), typeName(t.type),
                    shapeText(t).c_str(), (unsigned long long)t.offset, (unsigned long long)t.nbytes);
    appendf(out, "\ntotal: %zu tensors, %llu elements, %llu bytes (%.1f MiB)\n", f.tensors().size(),
                (unsigned long long)totalElements, (unsigned long long)totalBytes, double(totalBytes) / (1 << 20));
    return out;
}

} // namespace

std::string describeModelFile(const std::string& path, ModelFileFormat format, size_t maxItems) {
    const std::shared_ptr<const GgufFile> f = GgufFile::open(path);
    uint64_t elements = 0, bytes = 0;
    for (const TensorInfo& t : f->tensors()) {
        elements += uint64_t(t.elements());
        bytes += t.nbytes;
    }
    return format == ModelFileFormat::Json ? describeJson(*f, maxItems, elements, bytes)
                                           : describeText(*f, maxItems, elements, bytes);
}

void checkModelFile(const std::string& path) {
    const std::shared_ptr<const GgufFile> f = GgufFile::open(path);
    if (!f->find("general.architecture") || !f->findTensor("token_embd.weight")) return;
    CpuBackend checker({1, false});  // the checks, not the speed: one thread, weights in place
    loadModel(f, checker);
    if (f->find("tokenizer.ggml.model")) Tokenizer::fromGguf(*f);
}

ModelFileSummary summarizeModelFile(const std::string& path) {
    const std::shared_ptr<const GgufFile> f = GgufFile::open(path);
    if (!f->find("general.architecture") || !f->findTensor("token_embd.weight"))
        throw Error(path + ": not a model (a GGUF without general.architecture or token_embd.weight)");
    ModelFileSummary s;
    CpuBackend checker({1, false});
    s.config = loadModel(f, checker)->config();
    if (f->find("tokenizer.ggml.model")) Tokenizer::fromGguf(*f);
    s.hasChatTemplate = f->find("tokenizer.chat_template") != nullptr;
    s.fileBytes = f->fileSize();
    return s;
}

} // namespace weir
