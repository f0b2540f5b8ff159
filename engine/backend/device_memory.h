#pragma once
// Memory a backend computes on: host memory for the CPU, device memory for a
// GPU. The KV pools and a model's scratch allocate and copy through this, so
// the page allocator above it never knows where the bytes are.
#include <cstddef>
#include <string_view>

namespace weir {

class DeviceMemory {
public:
    virtual ~DeviceMemory() = default;
    // `bytes` zeroed bytes, or nullptr when they cannot be had (never throws:
    // callers decide whether that is an error or a refused resize). `what`
    // names the use for diagnostics ("full KV pool, layer 3 K").
    virtual void* allocate(size_t bytes, std::string_view what) = 0;
    virtual void release(void* p) = 0;
    virtual void copyIn(void* dst, const void* hostSrc, size_t bytes) = 0;    // host -> this memory
    virtual void copyOut(void* hostDst, const void* src, size_t bytes) = 0;   // this memory -> host
    virtual void copyWithin(void* dst, const void* src, size_t bytes) = 0;    // inside this memory
    // True when the host may read and write these pointers directly (the CPU).
    virtual bool hostVisible() const = 0;
};

// Plain process memory (calloc, large blocks mapped from the OS): the CPU
// backend's, and the default of KV storage built without a backend.
DeviceMemory& hostMemory();

} // namespace weir
