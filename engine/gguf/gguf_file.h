#pragma once
// Read-only view of a GGUF file (versions 2 and 3). The file is memory-mapped;
// tensor data is used in place from the mapping, never copied at load.
// Every malformed input throws weir::Error with the one-line message
// "FILE: offset N: problem"; counts are checked against the bytes left before
// anything is allocated, so a hostile file cannot make us allocate wildly.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "kernels/cpu/ggml_types.h"

namespace weir::gguf {

enum class ValueType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
    String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};
const char* valueTypeName(ValueType t);

struct Value;
struct Array {
    ValueType elementType = ValueType::U8;
    std::vector<Value> items;
};

// One metadata value. Integers of every width are held as int64/uint64,
// floats as double; `type` keeps the type stored in the file.
struct Value {
    ValueType type = ValueType::U8;
    std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;

    std::optional<int64_t> asInt() const;     // any integer type (or bool)
    std::optional<double> asFloat() const;    // any numeric type
    const std::string* asString() const;
    const Array* asArray() const;
    std::string toDisplayString(size_t maxItems = 8) const;  // for `weir-cli inspect`
};

struct KeyValue {
    std::string key;
    Value value;
};

struct TensorInfo {
    std::string name;
    uint32_t nDims = 0;
    int64_t ne[4] = {1, 1, 1, 1};   // innermost first; unused dims are 1
    kernels::GgmlType type = kernels::GgmlType::F32;
    uint64_t offset = 0;            // relative to the data section
    uint64_t nbytes = 0;
    const uint8_t* data = nullptr;  // points into the mapping
    int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

class GgufFile {
public:
    // Maps and parses `path`. Throws weir::Error naming the file, offset and problem.
    static std::unique_ptr<GgufFile> open(const std::string& path);
    // Parses a buffer the caller keeps alive (fuzzing, tests). `name` is used in errors.
    static std::unique_ptr<GgufFile> fromMemory(const uint8_t* data, size_t size, const std::string& name);
    ~GgufFile();

    const std::string& path() const { return path_; }
    uint32_t version() const { return version_; }
    uint64_t fileSize() const { return size_; }
    uint64_t alignment() const { return alignment_; }
    uint64_t dataOffset() const { return dataOffset_; }
    // Whether the tensors live in a read-only mapping of the file (open()),
    // whose pages can be given back and reread, rather than in a caller's buffer.
    bool isMapped() const;

    const std::vector<KeyValue>& metadata() const { return kv_; }
    const Value* find(std::string_view key) const;
    // Scalar getters: nullopt when absent; throw weir::Error when present with
    // an incompatible type (getInt: any integer or bool; getFloat: any number).
    std::optional<int64_t> getInt(std::string_view key) const;
    std::optional<double> getFloat(std::string_view key) const;
    std::optional<std::string> getString(std::string_view key) const;
    std::optional<bool> getBool(std::string_view key) const;
    // Typed array getters: nullopt when absent; throw weir::Error when present with the wrong element type.
    std::optional<std::vector<std::string>> getStringArray(std::string_view key) const;
    std::optional<std::vector<float>> getFloatArray(std::string_view key) const;
    std::optional<std::vector<int64_t>> getIntArray(std::string_view key) const;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* findTensor(std::string_view name) const;

private:
    GgufFile() = default;
    struct Mapping;
    std::unique_ptr<Mapping> mapping_;
    std::string path_;
    uint32_t version_ = 0;
    uint64_t size_ = 0;
    uint64_t alignment_ = 32;
    uint64_t dataOffset_ = 0;
    std::vector<KeyValue> kv_;
    std::vector<TensorInfo> tensors_;
    std::unordered_map<std::string, size_t> kvIndex_;      // key -> index into kv_
    std::unordered_map<std::string, size_t> tensorIndex_;  // name -> index into tensors_
    friend class GgufParser;
};

} // namespace weir::gguf
