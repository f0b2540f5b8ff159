#pragma once
// Internal: the bounds-checked GGUF parser behind GgufFile::open/fromMemory.
// Every read goes through a cursor that knows how many bytes are left, so a
// malformed file ends in a weir::Error ("NAME: offset N: problem"), never in
// an out-of-bounds read or an allocation sized by an unchecked count.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gguf/gguf_file.h"

namespace weir::gguf {

// Limits that keep hostile files cheap to reject.
inline constexpr int kMaxArrayDepth = 8;          // arrays of arrays of ... at most this deep
inline constexpr uint32_t kMaxDims = 4;
inline constexpr uint64_t kDefaultAlignment = 32;

// Quotes a string taken from a file for an error message: printable ASCII kept,
// everything else escaped, long strings cut, so the message stays one line.
std::string quoteForMessage(std::string_view s);

class GgufParser {
public:
    GgufParser(const uint8_t* data, size_t size, const std::string& name)
        : data_(data), size_(size), name_(name) {}
    // Fills `file` (version, metadata, tensors, data offset); throws weir::Error.
    void parse(GgufFile& file);

private:
    [[noreturn]] void fail(uint64_t offset, const std::string& problem) const;
    size_t left() const { return size_ - pos_; }
    void need(size_t n, const char* what) const;
    template <class T> T read(const char* what);
    std::string readString(const char* what);
    ValueType readValueType(const char* what);
    Value readValue(ValueType type, int depth);
    void readTensorInfos(GgufFile& file, uint64_t count);
    void placeTensors(GgufFile& file);
    std::string tensorSizeMismatch(const TensorInfo& t, uint64_t room, bool last) const;

    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
    const std::string& name_;
    // File offset of each tensor's offset field, for messages about its data.
    std::vector<uint64_t> offsetFieldOffsets_;
};

} // namespace weir::gguf
