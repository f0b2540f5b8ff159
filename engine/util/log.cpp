#include "engine/util/log.h"

#include <atomic>
#include <memory>
#include <mutex>

namespace weir {
namespace {

// The sink is copied out under the lock and called outside it, so a slow
// sink never blocks another thread's line nor setLogSink.
std::mutex sinkMutex;
std::shared_ptr<const LogSink> currentSink;
std::atomic<bool> sinkInstalled{false};

} // namespace

const char* logLevelName(LogLevel level) {
    switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warning: return "warning";
    case LogLevel::Error: return "error";
    }
    return "unknown";
}

bool logEnabled() { return sinkInstalled.load(std::memory_order_relaxed); }

void logLine(LogLevel level, std::string_view subsystem, std::string_view message) {
    if (!logEnabled()) return;
    std::shared_ptr<const LogSink> sink;
    {
        std::lock_guard<std::mutex> lock(sinkMutex);
        sink = currentSink;
    }
    if (sink) (*sink)(level, subsystem, message);
}

void installLogSink(LogSink sink) {
    std::shared_ptr<const LogSink> next = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
    std::lock_guard<std::mutex> lock(sinkMutex);
    currentSink = std::move(next);
    sinkInstalled.store(currentSink != nullptr, std::memory_order_relaxed);
}

} // namespace weir
