// Bounds-checked GGUF parsing. Layout (little-endian): magic "GGUF", u32
// version (2 or 3), u64 tensor count, u64 metadata count, the metadata
// key/values (u64-length strings, u32 value types, arrays as u32 element type
// + u64 count), the tensor infos (name, u32 dims, u64 extents, u32 ggml type,
// u64 offset from the data start), then the tensor data aligned to
// general.alignment (default 32). The rule everywhere: check that the
// bytes are there before reading, and that a count fits in the bytes left
// before allocating for it.
#include "engine/gguf/gguf_parser.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_set>

#include "weir/base/error.h"

namespace weir::gguf {

static_assert(std::endian::native == std::endian::little, "the GGUF reader assumes a little-endian host");

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32

// Smallest encoding of one value of a type: used to reject counts that cannot fit.
uint64_t alignUp(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

size_t minValueBytes(ValueType t) {
    switch (t) {
    case ValueType::U8: case ValueType::I8: case ValueType::Bool: return 1;
    case ValueType::U16: case ValueType::I16: return 2;
    case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
    case ValueType::U64: case ValueType::I64: case ValueType::F64: return 8;
    case ValueType::String: return 8;   // the length alone
    case ValueType::Array: return 12;   // element type + count
    }
    return 1;
}

// Smallest KV record: empty key (u64 length), value type, a one-byte value.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
// Smallest tensor info: empty name, n_dims = 0, type, offset.
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;

bool isPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

} // namespace

std::string quoteForMessage(std::string_view s) {
    constexpr size_t kMaxShown = 80;
    std::string out = "'";
    for (size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
            out += char(c);
        } else {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    out += "'";
    if (s.size() > kMaxShown) out += "... (" + std::to_string(s.size()) + " bytes)";
    return out;
}

void GgufParser::fail(uint64_t offset, const std::string& problem) const {
    throw Error(name_ + ": offset " + std::to_string(offset) + ": " + problem);
}

void GgufParser::need(size_t n, const char* what) const {
    if (n > left())
        fail(pos_, std::string("truncated file: ") + what + " needs " + std::to_string(n) + " bytes, only " +
                       std::to_string(left()) + " left");
}

template <class T> T GgufParser::read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
}

std::string GgufParser::readString(const char* what) {
    const uint64_t off = pos_;
    const uint64_t len = read<uint64_t>(what);
    if (len > left())
        fail(off, std::string("string length ") + std::to_string(len) + " of " + what +
                      " runs past the end of the file (" + std::to_string(left()) + " bytes left)");
    std::string s(reinterpret_cast<const char*>(data_ + pos_), size_t(len));
    pos_ += size_t(len);
    return s;
}

ValueType GgufParser::readValueType(const char* what) {
    const uint64_t off = pos_;
    const uint32_t t = read<uint32_t>(what);
    if (t > static_cast<uint32_t>(ValueType::F64)) fail(off, "unknown value type " + std::to_string(t) + " of " + what);
    return static_cast<ValueType>(t);
}

Value GgufParser::readValue(ValueType type, int depth) {
    Value v;
    v.type = type;
    switch (type) {
    case ValueType::U8: v.data = uint64_t(read<uint8_t>("u8 value")); break;
    case ValueType::I8: v.data = int64_t(read<int8_t>("i8 value")); break;
    case ValueType::U16: v.data = uint64_t(read<uint16_t>("u16 value")); break;
    case ValueType::I16: v.data = int64_t(read<int16_t>("i16 value")); break;
    case ValueType::U32: v.data = uint64_t(read<uint32_t>("u32 value")); break;
    case ValueType::I32: v.data = int64_t(read<int32_t>("i32 value")); break;
    case ValueType::U64: v.data = read<uint64_t>("u64 value"); break;
    case ValueType::I64: v.data = read<int64_t>("i64 value"); break;
    case ValueType::F32: v.data = double(read<float>("f32 value")); break;
    case ValueType::F64: v.data = read<double>("f64 value"); break;
    case ValueType::Bool: {
        const uint64_t off = pos_;
        const uint8_t b = read<uint8_t>("bool value");
        if (b > 1) fail(off, "bool value " + std::to_string(b) + " is neither 0 nor 1");
        v.data = b == 1;
        break;
    }
    case ValueType::String: v.data = readString("string value"); break;
    case ValueType::Array: {
        const uint64_t off = pos_;
        if (depth >= kMaxArrayDepth)
            fail(off, "array nesting deeper than " + std::to_string(kMaxArrayDepth) + " levels");
        Array arr;
        arr.elementType = readValueType("array element type");
        const uint64_t countOff = pos_;
        const uint64_t count = read<uint64_t>("array count");
        const size_t minBytes = minValueBytes(arr.elementType);
        if (count > left() / minBytes)
            fail(countOff, "array count " + std::to_string(count) + " of " + valueTypeName(arr.elementType) +
                               " cannot fit in the " + std::to_string(left()) + " bytes left");
        arr.items.reserve(size_t(count));
        for (uint64_t i = 0; i < count; ++i) arr.items.push_back(readValue(arr.elementType, depth + 1));
        v.data = std::move(arr);
        break;
    }
    }
    return v;
}

void GgufParser::parse(GgufFile& file) {
    file.size_ = size_;
    const uint32_t magic = read<uint32_t>("magic");
    if (magic != kMagic)
        fail(0, "bad magic " + quoteForMessage(std::string_view(reinterpret_cast<const char*>(data_), 4)) +
                    " (not a GGUF file)");
    const uint32_t version = read<uint32_t>("version");
    if (version != 2 && version != 3) {
        std::string problem = "unsupported GGUF version " + std::to_string(version) + " (only 2 and 3 are read)";
        if (version == 0x02000000u || version == 0x03000000u) problem += "; big-endian files are not supported";
        fail(4, problem);
    }
    file.version_ = version;

    const uint64_t tensorCountOff = pos_;
    const uint64_t tensorCount = read<uint64_t>("tensor_count");
    const uint64_t kvCountOff = pos_;
    const uint64_t kvCount = read<uint64_t>("kv_count");
    if (tensorCount > left() / kMinTensorInfoBytes)
        fail(tensorCountOff, "tensor_count " + std::to_string(tensorCount) + " cannot fit in the " +
                                 std::to_string(left()) + " bytes left");
    if (kvCount > left() / kMinKvBytes)
        fail(kvCountOff,
             "kv_count " + std::to_string(kvCount) + " cannot fit in the " + std::to_string(left()) + " bytes left");

    file.kv_.reserve(size_t(kvCount));
    for (uint64_t i = 0; i < kvCount; ++i) {
        const uint64_t recordOff = pos_;
        std::string key = readString("key");
        if (file.kvIndex_.count(key)) fail(recordOff, "duplicate key " + quoteForMessage(key));
        const ValueType type = readValueType("metadata value type");
        const uint64_t valueOff = pos_;
        Value value = readValue(type, 0);
        if (key == "general.alignment") {
            const std::optional<int64_t> a = value.asInt();
            if (!a || type == ValueType::Bool)
                fail(valueOff, std::string("general.alignment must be an integer, not ") + valueTypeName(type));
            if (*a <= 0 || !isPowerOfTwo(uint64_t(*a)))
                fail(valueOff, "general.alignment " + std::to_string(*a) + " is not a power of two");
            file.alignment_ = uint64_t(*a);
        }
        file.kvIndex_.emplace(key, file.kv_.size());
        file.kv_.push_back(KeyValue{std::move(key), std::move(value)});
    }

    readTensorInfos(file, tensorCount);

    // The data section starts at the next multiple of the alignment.
    const uint64_t rem = pos_ % file.alignment_;
    const uint64_t pad = rem ? file.alignment_ - rem : 0;
    if (pad > std::numeric_limits<uint64_t>::max() - pos_)
        fail(pos_, "data section start overflows with alignment " + std::to_string(file.alignment_));
    file.dataOffset_ = pos_ + pad;
    placeTensors(file);
}

void GgufParser::readTensorInfos(GgufFile& file, uint64_t count) {
    file.tensors_.reserve(size_t(count));
    offsetFieldOffsets_.reserve(size_t(count));
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t infoOff = pos_;
        TensorInfo t;
        t.name = readString("tensor name");
        const std::string q = quoteForMessage(t.name);
        if (file.tensorIndex_.count(t.name)) fail(infoOff, "duplicate tensor name " + q);

        const uint64_t dimsOff = pos_;
        t.nDims = read<uint32_t>("tensor n_dims");
        if (t.nDims > kMaxDims)
            fail(dimsOff, "tensor " + q + " has " + std::to_string(t.nDims) + " dimensions (at most 4)");
        uint64_t dimOffsets[kMaxDims] = {};
        for (uint32_t d = 0; d < t.nDims; ++d) {
            dimOffsets[d] = pos_;
            const uint64_t n = read<uint64_t>("tensor dimension");
            if (n == 0) fail(dimOffsets[d], "tensor " + q + " dimension " + std::to_string(d) + " is zero");
            if (n > uint64_t(std::numeric_limits<int64_t>::max()))
                fail(dimOffsets[d], "tensor " + q + " dimension " + std::to_string(d) + " is negative (" +
                                        std::to_string(int64_t(n)) + ")");
            t.ne[d] = int64_t(n);
        }

        const uint64_t typeOff = pos_;
        const uint32_t typeId = read<uint32_t>("tensor type");
        const kernels::TypeTraits* traits = kernels::typeTraits(typeId);
        if (!traits) fail(typeOff, "tensor " + q + " has unknown tensor type " + std::to_string(typeId));
        t.type = static_cast<kernels::GgmlType>(typeId);
        if (t.ne[0] % traits->blockElems != 0)
            fail(t.nDims ? dimOffsets[0] : typeOff,
                 "tensor " + q + " dimension 0 (" + std::to_string(t.ne[0]) + ") is not a multiple of the block size " +
                     std::to_string(traits->blockElems) + " of " + traits->name);

        int64_t elements = 1;
        for (int64_t n : t.ne)
            if (__builtin_mul_overflow(elements, n, &elements))
                fail(dimsOff, "tensor " + q + " element count overflows");
        uint64_t bytes = uint64_t(t.ne[0] / traits->blockElems);
        bool overflow = __builtin_mul_overflow(bytes, uint64_t(traits->blockBytes), &bytes);
        for (int d = 1; d < 4; ++d) overflow = overflow || __builtin_mul_overflow(bytes, uint64_t(t.ne[d]), &bytes);
        if (overflow) fail(dimsOff, "tensor " + q + " byte size overflows");
        t.nbytes = bytes;

        const uint64_t offsetOff = pos_;
        t.offset = read<uint64_t>("tensor offset");
        if (t.offset % file.alignment_ != 0)
            fail(offsetOff, "tensor " + q + " offset " + std::to_string(t.offset) +
                                " is misaligned (not a multiple of the alignment " + std::to_string(file.alignment_) +
                                ")");

        file.tensorIndex_.emplace(t.name, file.tensors_.size());
        file.tensors_.push_back(std::move(t));
        offsetFieldOffsets_.push_back(offsetOff);
    }
}

void GgufParser::placeTensors(GgufFile& file) {
    const uint64_t dataStart = file.dataOffset_;
    for (size_t i = 0; i < file.tensors_.size(); ++i) {
        TensorInfo& t = file.tensors_[i];
        uint64_t begin = 0, end = 0;
        if (__builtin_add_overflow(dataStart, t.offset, &begin) || __builtin_add_overflow(begin, t.nbytes, &end) ||
            end > size_)
            fail(offsetFieldOffsets_[i], "tensor " + quoteForMessage(t.name) + " data (offset " +
                                             std::to_string(t.offset) + ", " + std::to_string(t.nbytes) +
                                             " bytes) lies outside the file (" + std::to_string(size_) + " bytes)");
        t.data = data_ + begin;
    }
    // Overlap check: sort by offset, then each tensor must end before the next begins.
    std::vector<size_t> order(file.tensors_.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return file.tensors_[a].offset < file.tensors_[b].offset; });
    for (size_t k = 1; k < order.size(); ++k) {
        const TensorInfo& prev = file.tensors_[order[k - 1]];
        const TensorInfo& cur = file.tensors_[order[k]];
        if (prev.offset + prev.nbytes > cur.offset)
            fail(offsetFieldOffsets_[order[k]],
                 "tensor " + quoteForMessage(cur.name) + " data overlaps tensor " + quoteForMessage(prev.name));
    }
    // Tensors are packed: each one's data, padded to the alignment, ends where
    // the next begins. More room than that means the declared type or shape
    // is smaller than what was written (an F32 norm relabelled BF16, a Q4_1
    // matrix relabelled Q4_K), and reading it would give garbage.
    const uint64_t dataBytes = size_ - dataStart;
    for (size_t k = 0; k < order.size(); ++k) {
        const TensorInfo& t = file.tensors_[order[k]];
        const uint64_t padded = alignUp(t.offset + t.nbytes, file.alignment_);
        const bool last = k + 1 == order.size();
        const uint64_t room = last ? dataBytes - t.offset : file.tensors_[order[k + 1]].offset - t.offset;
        if (last ? room > padded - t.offset : room != padded - t.offset)
            fail(offsetFieldOffsets_[order[k]], tensorSizeMismatch(t, room, last));
    }
}

std::string GgufParser::tensorSizeMismatch(const TensorInfo& t, uint64_t room, bool last) const {
    const kernels::TypeTraits* tr = kernels::typeTraits(t.type);
    std::string shape;
    for (uint32_t d = 0; d < std::max<uint32_t>(t.nDims, 1); ++d) shape += (d ? ", " : "") + std::to_string(t.ne[d]);
    return "tensor " + quoteForMessage(t.name) + " is " + (tr ? tr->name : "?") + " [" + shape + "], " +
           std::to_string(t.nbytes) + " bytes, but " + std::to_string(room) + " bytes lie " +
           (last ? "from its start to the end of the file" : "before the next tensor") +
           ": its type or shape does not match its data";
}

} // namespace weir::gguf
