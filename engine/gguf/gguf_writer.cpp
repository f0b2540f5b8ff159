// GGUF writer: header, metadata, tensor infos, padding, then tensor data with
// every tensor starting at a multiple of the alignment.
#include "engine/gguf/gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "weir/base/error.h"

namespace weir::gguf {

Value makeU8(uint8_t v) { return Value{ValueType::U8, uint64_t(v)}; }
Value makeI8(int8_t v) { return Value{ValueType::I8, int64_t(v)}; }
Value makeU16(uint16_t v) { return Value{ValueType::U16, uint64_t(v)}; }
Value makeI16(int16_t v) { return Value{ValueType::I16, int64_t(v)}; }
Value makeU32(uint32_t v) { return Value{ValueType::U32, uint64_t(v)}; }
Value makeI32(int32_t v) { return Value{ValueType::I32, int64_t(v)}; }
Value makeU64(uint64_t v) { return Value{ValueType::U64, v}; }
Value makeI64(int64_t v) { return Value{ValueType::I64, v}; }
Value makeF32(float v) { return Value{ValueType::F32, double(v)}; }
Value makeF64(double v) { return Value{ValueType::F64, v}; }
Value makeBool(bool v) { return Value{ValueType::Bool, v}; }
Value makeString(std::string v) { return Value{ValueType::String, std::move(v)}; }
Value makeArray(ValueType elementType, std::vector<Value> items) {
    return Value{ValueType::Array, Array{elementType, std::move(items)}};
}
Value makeStringArray(const std::vector<std::string>& v) {
    std::vector<Value> items;
    items.reserve(v.size());
    for (const auto& s : v) items.push_back(makeString(s));
    return makeArray(ValueType::String, std::move(items));
}
Value makeF32Array(const std::vector<float>& v) {
    std::vector<Value> items;
    items.reserve(v.size());
    for (float f : v) items.push_back(makeF32(f));
    return makeArray(ValueType::F32, std::move(items));
}
Value makeI32Array(const std::vector<int32_t>& v) {
    std::vector<Value> items;
    items.reserve(v.size());
    for (int32_t i : v) items.push_back(makeI32(i));
    return makeArray(ValueType::I32, std::move(items));
}

namespace {

constexpr const char* kAlignmentKey = "general.alignment";

// Checks that a value holds what its type says, so serialisation cannot misread it.
void checkValue(const std::string& key, const Value& v) {
    bool ok = false;
    switch (v.type) {
    case ValueType::U8: case ValueType::U16: case ValueType::U32: case ValueType::U64:
        ok = std::holds_alternative<uint64_t>(v.data);
        break;
    case ValueType::I8: case ValueType::I16: case ValueType::I32: case ValueType::I64:
        ok = std::holds_alternative<int64_t>(v.data);
        break;
    case ValueType::F32: case ValueType::F64: ok = std::holds_alternative<double>(v.data); break;
    case ValueType::Bool: ok = std::holds_alternative<bool>(v.data); break;
    case ValueType::String: ok = std::holds_alternative<std::string>(v.data); break;
    case ValueType::Array: {
        const Array* a = v.asArray();
        ok = a != nullptr;
        if (ok) {
            for (const Value& item : a->items) {
                if (item.type != a->elementType)
                    throw Error("GgufWriter: key '" + key + "': array item of type " + valueTypeName(item.type) +
                                " in an array of " + valueTypeName(a->elementType));
                checkValue(key, item);
            }
        }
        break;
    }
    }
    if (!ok) throw Error("GgufWriter: key '" + key + "': value does not hold a " + valueTypeName(v.type));
}

class ByteSink {
public:
    std::vector<uint8_t> bytes;
    template <class T> void put(T v) {
        const size_t at = bytes.size();
        bytes.resize(at + sizeof(T));
        std::memcpy(bytes.data() + at, &v, sizeof(T));
    }
    void putString(const std::string& s) {
        put<uint64_t>(s.size());
        bytes.insert(bytes.end(), s.begin(), s.end());
    }
    void putValue(const Value& v) {
        switch (v.type) {
        case ValueType::U8: put<uint8_t>(uint8_t(std::get<uint64_t>(v.data))); break;
        case ValueType::I8: put<int8_t>(int8_t(std::get<int64_t>(v.data))); break;
        case ValueType::U16: put<uint16_t>(uint16_t(std::get<uint64_t>(v.data))); break;
        case ValueType::I16: put<int16_t>(int16_t(std::get<int64_t>(v.data))); break;
        case ValueType::U32: put<uint32_t>(uint32_t(std::get<uint64_t>(v.data))); break;
        case ValueType::I32: put<int32_t>(int32_t(std::get<int64_t>(v.data))); break;
        case ValueType::U64: put<uint64_t>(std::get<uint64_t>(v.data)); break;
        case ValueType::I64: put<int64_t>(std::get<int64_t>(v.data)); break;
        case ValueType::F32: put<float>(float(std::get<double>(v.data))); break;
        case ValueType::F64: put<double>(std::get<double>(v.data)); break;
        case ValueType::Bool: put<uint8_t>(std::get<bool>(v.data) ? 1 : 0); break;
        case ValueType::String: putString(std::get<std::string>(v.data)); break;
        case ValueType::Array: {
            const Array& a = std::get<Array>(v.data);
            put<uint32_t>(static_cast<uint32_t>(a.elementType));
            put<uint64_t>(a.items.size());
            for (const Value& item : a.items) putValue(item);
            break;
        }
        }
    }
    void padTo(uint64_t alignment) {
        while (bytes.size() % alignment) bytes.push_back(0);
    }
};

uint64_t alignUp(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

} // namespace

void GgufWriter::setAlignment(uint64_t alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) || alignment > 0xffffffffu)
        throw Error("GgufWriter: alignment " + std::to_string(alignment) + " is not a power of two that fits in u32");
    alignment_ = alignment;
    for (KeyValue& kv : kv_)
        if (kv.key == kAlignmentKey) {
            kv.value = makeU32(uint32_t(alignment));
            return;
        }
    if (alignment != 32) kv_.push_back(KeyValue{kAlignmentKey, makeU32(uint32_t(alignment))});
}

void GgufWriter::add(std::string key, Value value) {
    checkValue(key, value);
    for (const KeyValue& kv : kv_)
        if (kv.key == key) throw Error("GgufWriter: duplicate key '" + key + "'");
    if (key == kAlignmentKey) {
        const std::optional<int64_t> a = value.asInt();
        if (!a || *a <= 0) throw Error("GgufWriter: general.alignment must be a positive integer");
        kv_.push_back(KeyValue{std::move(key), std::move(value)});
        setAlignment(uint64_t(*a));
        return;
    }
    kv_.push_back(KeyValue{std::move(key), std::move(value)});
}

std::pair<uint64_t, uint64_t> GgufWriter::checkTensor(const std::string& name, kernels::GgmlType type,
                                                      const std::vector<int64_t>& ne) const {
    const kernels::TypeTraits* traits = kernels::typeTraits(type);
    if (!traits) throw Error("GgufWriter: tensor '" + name + "' has an unknown type");
    if (ne.empty() || ne.size() > 4) throw Error("GgufWriter: tensor '" + name + "' needs 1 to 4 dimensions");
    uint64_t bytes = 1, rowBytes = 0;
    for (size_t d = 0; d < ne.size(); ++d) {
        if (ne[d] <= 0) throw Error("GgufWriter: tensor '" + name + "' has a dimension <= 0");
        if (d == 0 && ne[0] % traits->blockElems)
            throw Error("GgufWriter: tensor '" + name + "' row length is not a multiple of the block size");
        const uint64_t factor = d == 0 ? uint64_t(ne[0] / traits->blockElems) * uint64_t(traits->blockBytes)
                                       : uint64_t(ne[d]);
        if (__builtin_mul_overflow(bytes, factor, &bytes))
            throw Error("GgufWriter: tensor '" + name + "' is too large");
        if (d == 0) rowBytes = bytes;
    }
    for (const PendingTensor& t : tensors_)
        if (t.name == name) throw Error("GgufWriter: duplicate tensor name '" + name + "'");
    return {bytes, rowBytes};
}

void GgufWriter::addTensor(std::string name, kernels::GgmlType type, std::vector<int64_t> ne,
                           std::vector<uint8_t> data) {
    const auto [bytes, rowBytes] = checkTensor(name, type, ne);
    if (data.size() != bytes)
        throw Error("GgufWriter: tensor '" + name + "' needs " + std::to_string(bytes) + " bytes, got " +
                    std::to_string(data.size()));
    tensors_.push_back(PendingTensor{std::move(name), type, std::move(ne), bytes, rowBytes, std::move(data), {}});
}

void GgufWriter::addTensor(std::string name, kernels::GgmlType type, std::vector<int64_t> ne, const void* data,
                           size_t nbytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    addTensor(std::move(name), type, std::move(ne), std::vector<uint8_t>(p, p + nbytes));
}

void GgufWriter::addTensor(std::string name, kernels::GgmlType type, std::vector<int64_t> ne, TensorFill fill) {
    if (!fill) throw Error("GgufWriter: tensor '" + name + "' has no data and nothing to fill it");
    const auto [bytes, rowBytes] = checkTensor(name, type, ne);
    tensors_.push_back(PendingTensor{std::move(name), type, std::move(ne), bytes, rowBytes, {}, std::move(fill)});
}

std::vector<uint8_t> GgufWriter::header() const {
    ByteSink out;
    out.put<uint32_t>(0x46554747);  // "GGUF"
    out.put<uint32_t>(version_);
    out.put<uint64_t>(tensors_.size());
    out.put<uint64_t>(kv_.size());
    for (const KeyValue& kv : kv_) {
        out.putString(kv.key);
        out.put<uint32_t>(static_cast<uint32_t>(kv.value.type));
        out.putValue(kv.value);
    }
    uint64_t offset = 0;
    for (const PendingTensor& t : tensors_) {
        out.putString(t.name);
        out.put<uint32_t>(uint32_t(t.ne.size()));
        for (int64_t n : t.ne) out.put<uint64_t>(uint64_t(n));
        out.put<uint32_t>(static_cast<uint32_t>(t.type));
        out.put<uint64_t>(offset);
        offset = alignUp(offset + t.nbytes, alignment_);
    }
    out.padTo(alignment_);
    return std::move(out.bytes);
}

std::vector<uint8_t> GgufWriter::toBytes() const {
    std::vector<uint8_t> out = header();
    const size_t dataStart = out.size();
    for (const PendingTensor& t : tensors_) {
        out.resize(dataStart + alignUp(out.size() - dataStart, alignment_), 0);
        if (t.fill) {
            const size_t at = out.size();
            out.resize(at + t.nbytes);
            t.fill(0, out.data() + at, t.nbytes);
        } else {
            out.insert(out.end(), t.data.begin(), t.data.end());
        }
    }
    return out;
}

uint64_t GgufWriter::fileSize() const {
    uint64_t data = 0;
    for (const PendingTensor& t : tensors_) data = alignUp(data, alignment_) + t.nbytes;
    return header().size() + data;
}

void GgufWriter::writeFile(const std::string& path) const {
    struct Closer {
        void operator()(std::FILE* f) const { std::fclose(f); }
    };
    std::unique_ptr<std::FILE, Closer> f(std::fopen(path.c_str(), "wb"));
    if (!f) throw Error(path + ": cannot create: " + std::strerror(errno));
    const auto write = [&](const void* p, size_t n) {
        if (n && std::fwrite(p, 1, n, f.get()) != n) throw Error(path + ": write failed: " + std::strerror(errno));
    };
    const std::vector<uint8_t> head = header();
    write(head.data(), head.size());
    static const uint8_t zeros[64] = {};
    uint64_t written = 0;  // bytes of the data section so far
    for (const PendingTensor& t : tensors_) {
        for (uint64_t pad = alignUp(written, alignment_) - written; pad > 0;) {
            const size_t n = size_t(std::min<uint64_t>(pad, sizeof zeros));
            write(zeros, n);
            pad -= n;
            written += n;
        }
        if (t.fill) {
            // Whole rows, about kChunk bytes at a time.
            constexpr uint64_t kChunk = 32ull << 20;
            const uint64_t step = std::max<uint64_t>(1, kChunk / t.rowBytes) * t.rowBytes;
            std::vector<uint8_t> chunk(size_t(std::min(step, t.nbytes)));
            for (uint64_t at = 0; at < t.nbytes; at += step) {
                const uint64_t n = std::min(step, t.nbytes - at);
                t.fill(at, chunk.data(), n);
                write(chunk.data(), size_t(n));
            }
        } else {
            write(t.data.data(), t.data.size());
        }
        written += t.nbytes;
    }
    if (std::fflush(f.get()) != 0) throw Error(path + ": write failed: " + std::strerror(errno));
    std::FILE* raw = f.release();
    if (std::fclose(raw) != 0) throw Error(path + ": close failed: " + std::strerror(errno));
}

} // namespace weir::gguf
