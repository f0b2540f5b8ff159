#pragma once
// A buffer in a backend's memory that grows on demand and is released with
// its owner: a forward pass's activations, a pool's K/V rows.
#include <cstddef>
#include <string>
#include <utility>

#include "engine/backend/device_memory.h"
#include "weir/base/error.h"

namespace weir {

class BackendBuffer {
public:
    BackendBuffer() = default;
    explicit BackendBuffer(DeviceMemory& memory) : memory_(&memory) {}
    ~BackendBuffer() { reset(); }
    BackendBuffer(BackendBuffer&& o) noexcept
        : memory_(o.memory_), data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    BackendBuffer& operator=(BackendBuffer&& o) noexcept {
        if (this != &o) {
            reset();
            memory_ = o.memory_;
            data_ = std::exchange(o.data_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }
    BackendBuffer(const BackendBuffer&) = delete;
    BackendBuffer& operator=(const BackendBuffer&) = delete;

    // At least `bytes` (zeroed when new; old contents are not kept). Throws
    // weir::Error naming `what` when the memory cannot be had.
    void ensure(size_t bytes, const char* what) {
        if (bytes <= bytes_ && data_) return;
        reset();
        data_ = memory_->allocate(bytes, what);
        if (!data_)
            throw Error(std::string("out of memory: ") + what + " needs " + std::to_string(bytes >> 20) + " MiB");
        bytes_ = bytes;
    }
    void reset() {
        if (data_) memory_->release(data_);
        data_ = nullptr;
        bytes_ = 0;
    }
    float* floats() const { return static_cast<float*>(data_); }
    void* data() const { return data_; }
    size_t bytes() const { return bytes_; }

private:
    DeviceMemory* memory_ = nullptr;
    void* data_ = nullptr;
    size_t bytes_ = 0;
};

} // namespace weir
