// GgufFile: maps the file read-only and hands it to the parser; typed getters.
#include "engine/gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/gguf/gguf_parser.h"
#include "weir/base/error.h"

namespace weir::gguf {

// Owns the read-only mapping; tensor data points into it for the file's lifetime.
struct GgufFile::Mapping {
    void* addr = nullptr;
    size_t len = 0;
    ~Mapping() {
        if (addr) ::munmap(addr, len);
    }
};

GgufFile::~GgufFile() = default;

bool GgufFile::isMapped() const { return mapping_ && mapping_->addr; }

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw Error(path + ": cannot stat: " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(path + ": not a regular file");
    }
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->path_ = path;
    file->mapping_ = std::make_unique<Mapping>();
    const size_t size = size_t(st.st_size);
    if (size > 0) {
        void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            throw Error(path + ": cannot map: " + std::strerror(err));
        }
        file->mapping_->addr = p;
        file->mapping_->len = size;
    }
    ::close(fd);  // the mapping stays valid without the descriptor
    static const uint8_t kEmpty[1] = {0};
    const uint8_t* base = size ? static_cast<const uint8_t*>(file->mapping_->addr) : kEmpty;
    GgufParser(base, size, file->path_).parse(*file);
    return file;
}

std::unique_ptr<GgufFile> GgufFile::fromMemory(const uint8_t* data, size_t size, const std::string& name) {
    static const uint8_t kEmpty[1] = {0};
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->path_ = name;
    GgufParser(data ? data : kEmpty, data ? size : 0, file->path_).parse(*file);
    return file;
}

const Value* GgufFile::find(std::string_view key) const {
    const auto it = kvIndex_.find(std::string(key));
    return it == kvIndex_.end() ? nullptr : &kv_[it->second].value;
}

const TensorInfo* GgufFile::findTensor(std::string_view name) const {
    const auto it = tensorIndex_.find(std::string(name));
    return it == tensorIndex_.end() ? nullptr : &tensors_[it->second];
}

namespace {

[[noreturn]] void wrongType(const std::string& path, std::string_view key, const Value& v, const char* expected) {
    std::string got = valueTypeName(v.type);
    if (const Array* a = v.asArray()) got += std::string(" of ") + valueTypeName(a->elementType);
    throw Error(path + ": key " + quoteForMessage(key) + " is " + got + ", expected " + expected);
}

} // namespace

std::optional<int64_t> GgufFile::getInt(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    const std::optional<int64_t> i = v->asInt();
    if (!i) wrongType(path_, key, *v, "an integer");
    return i;
}

std::optional<double> GgufFile::getFloat(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    const std::optional<double> d = v->asFloat();
    if (!d) wrongType(path_, key, *v, "a number");
    return d;
}

std::optional<std::string> GgufFile::getString(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    const std::string* s = v->asString();
    if (!s) wrongType(path_, key, *v, "a string");
    return *s;
}

std::optional<bool> GgufFile::getBool(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    if (v->type != ValueType::Bool) wrongType(path_, key, *v, "a bool");
    return std::get<bool>(v->data);
}

std::optional<std::vector<std::string>> GgufFile::getStringArray(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    const Array* a = v->asArray();
    if (!a || a->elementType != ValueType::String) wrongType(path_, key, *v, "an array of strings");
    std::vector<std::string> out;
    out.reserve(a->items.size());
    for (const Value& item : a->items) out.push_back(*item.asString());
    return out;
}

std::optional<std::vector<float>> GgufFile::getFloatArray(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    const Array* a = v->asArray();
    const bool numeric = a && a->elementType != ValueType::String && a->elementType != ValueType::Array &&
                         a->elementType != ValueType::Bool;
    if (!numeric) wrongType(path_, key, *v, "an array of numbers");
    std::vector<float> out;
    out.reserve(a->items.size());
    for (const Value& item : a->items) out.push_back(float(*item.asFloat()));
    return out;
}

std::optional<std::vector<int64_t>> GgufFile::getIntArray(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    const Array* a = v->asArray();
    const bool integral = a && a->elementType != ValueType::String && a->elementType != ValueType::Array &&
                          a->elementType != ValueType::F32 && a->elementType != ValueType::F64;
    if (!integral) wrongType(path_, key, *v, "an array of integers");
    std::vector<int64_t> out;
    out.reserve(a->items.size());
    for (const Value& item : a->items) {
        const std::optional<int64_t> i = item.asInt();
        if (!i) throw Error(path_ + ": key " + quoteForMessage(key) + " has an item beyond the int64 range");
        out.push_back(*i);
    }
    return out;
}

} // namespace weir::gguf
