// Process memory as a DeviceMemory: what the CPU backend computes in, and
// what KV storage uses when no backend is given (bookkeeping tests).
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "engine/backend/device_memory.h"

namespace weir {

namespace {

// Blocks from this size up (the KV pools' layers, a model's scratch) are
// mapped from the OS directly rather than through malloc: glibc raises its
// mmap threshold to the size of each mapped block it frees (up to 32 MiB), so
// after one model switch the next model's pool layers came from the heap,
// where calloc zeroes them (every page resident, used or not) and free keeps
// them (the process grew with each switch). A mapping is zero pages touched
// only when used, and goes back to the OS whole when released.
constexpr size_t kMapFrom = size_t(1) << 20;

class HostMemory final : public DeviceMemory {
public:
    void* allocate(size_t bytes, std::string_view) override {
        if (bytes < kMapFrom) return std::calloc(bytes ? bytes : 1, 1);
        void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return nullptr;
        std::lock_guard lock(mutex_);
        mapped_.emplace(p, bytes);
        return p;
    }
    void release(void* p) override {
        if (!p) return;
        size_t bytes = 0;
        {
            std::lock_guard lock(mutex_);
            if (auto it = mapped_.find(p); it != mapped_.end()) {
                bytes = it->second;
                mapped_.erase(it);
            }
        }
        if (bytes) ::munmap(p, bytes);
        else std::free(p);
    }
    void copyIn(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
    void copyOut(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
    void copyWithin(void* dst, const void* src, size_t bytes) override { std::memmove(dst, src, bytes); }
    bool hostVisible() const override { return true; }

private:
    std::mutex mutex_;
    std::unordered_map<void*, size_t> mapped_;  // mapped blocks and their sizes
};

} // namespace

DeviceMemory& hostMemory() {
    // Never destroyed: buffers of static owners are released at exit, in any order.
    static HostMemory* memory = new HostMemory;
    return *memory;
}

} // namespace weir
