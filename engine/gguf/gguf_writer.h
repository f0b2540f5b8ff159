#pragma once
// Builds GGUF files (version 3 by default): metadata of every value type,
// nested arrays included, and tensors of any ggml type whose raw bytes the
// caller supplies. Offsets are aligned and padded as the format requires.
// Used by tests and by tools that write synthetic models.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"

namespace weir::gguf {

// Value builders, so callers need not know how Value stores each type.
Value makeU8(uint8_t v);
Value makeI8(int8_t v);
Value makeU16(uint16_t v);
Value makeI16(int16_t v);
Value makeU32(uint32_t v);
Value makeI32(int32_t v);
Value makeU64(uint64_t v);
Value makeI64(int64_t v);
Value makeF32(float v);
Value makeF64(double v);
Value makeBool(bool v);
Value makeString(std::string v);
// Every item must have type `elementType` (checked when the value is added).
Value makeArray(ValueType elementType, std::vector<Value> items);
Value makeStringArray(const std::vector<std::string>& v);
Value makeF32Array(const std::vector<float>& v);
Value makeI32Array(const std::vector<int32_t>& v);

class GgufWriter {
public:
    explicit GgufWriter(uint32_t version = 3) : version_(version) {}

    // Power of two; a value other than 32 is recorded as general.alignment (u32).
    void setAlignment(uint64_t alignment);
    uint64_t alignment() const { return alignment_; }

    // Adds one metadata key. Throws weir::Error on a duplicate key or a value
    // whose type does not match what it holds (arrays checked recursively).
    // Adding "general.alignment" also sets the alignment.
    void add(std::string key, Value value);
    void addU32(std::string key, uint32_t v) { add(std::move(key), makeU32(v)); }
    void addI32(std::string key, int32_t v) { add(std::move(key), makeI32(v)); }
    void addU64(std::string key, uint64_t v) { add(std::move(key), makeU64(v)); }
    void addF32(std::string key, float v) { add(std::move(key), makeF32(v)); }
    void addBool(std::string key, bool v) { add(std::move(key), makeBool(v)); }
    void addString(std::string key, std::string v) { add(std::move(key), makeString(std::move(v))); }

    // Adds a tensor; ne is innermost first (1 to 4 dims). `data` must hold
    // exactly the tensor's byte size. Throws weir::Error on a bad shape, an
    // unknown type, a wrong byte count or a duplicate name.
    void addTensor(std::string name, kernels::GgmlType type, std::vector<int64_t> ne, std::vector<uint8_t> data);
    void addTensor(std::string name, kernels::GgmlType type, std::vector<int64_t> ne, const void* data,
                   size_t nbytes);
    // Fills `size` bytes of a tensor's data that start `offset` bytes into it;
    // both are whole rows (multiples of the row's byte size).
    using TensorFill = std::function<void(uint64_t offset, uint8_t* out, uint64_t size)>;
    // Adds a tensor whose bytes `fill` makes when the file is written, a
    // chunk of rows at a time, so a file of many gigabytes never sits in
    // memory whole. Same checks as above.
    void addTensor(std::string name, kernels::GgmlType type, std::vector<int64_t> ne, TensorFill fill);

    // The complete file.
    std::vector<uint8_t> toBytes() const;
    // Writes the file, streaming tensor data; throws weir::Error on I/O failure.
    void writeFile(const std::string& path) const;
    // Bytes the complete file will have.
    uint64_t fileSize() const;

private:
    struct PendingTensor {
        std::string name;
        kernels::GgmlType type;
        std::vector<int64_t> ne;
        uint64_t nbytes = 0;
        uint64_t rowBytes = 0;
        std::vector<uint8_t> data;  // or, when empty,
        TensorFill fill;            // what makes the bytes
    };
    // Checks a new tensor's shape and name; returns its byte size and row size.
    std::pair<uint64_t, uint64_t> checkTensor(const std::string& name, kernels::GgmlType type,
                                              const std::vector<int64_t>& ne) const;
    // Everything before the data section, padded; tensors follow in order,
    // each at the next multiple of the alignment.
    std::vector<uint8_t> header() const;

    uint32_t version_;
    uint64_t alignment_ = 32;
    std::vector<KeyValue> kv_;
    std::vector<PendingTensor> tensors_;
};

} // namespace weir::gguf
