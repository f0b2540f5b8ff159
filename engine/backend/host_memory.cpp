// Process memory as a DeviceMemory: what the CPU backend computes in, and
// what KV storage uses when no backend is given (bookkeeping tests).
#include <cstdlib>
#include <cstring>

#include "engine/backend/device_memory.h"

namespace weir {

namespace {

class HostMemory final : public DeviceMemory {
public:
    // calloc: large blocks come from the OS as zero pages, touched only when used.
    void* allocate(size_t bytes, std::string_view) override { return std::calloc(bytes ? bytes : 1, 1); }
    void release(void* p) override { std::free(p); }
    void copyIn(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
    void copyOut(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
    void copyWithin(void* dst, const void* src, size_t bytes) override { std::memmove(dst, src, bytes); }
    bool hostVisible() const override { return true; }
};

} // namespace

DeviceMemory& hostMemory() {
    // Never destroyed: buffers of static owners are released at exit, in any order.
    static HostMemory* memory = new HostMemory;
    return *memory;
}

} // namespace weir
