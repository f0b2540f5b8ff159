#pragma once
// Counters behind GET /v1/stats: requests by outcome, tokens, generation
// throughput over the last minute, and latency (time to first token, whole
// request) over the most recent requests. Lives on the server's thread.
#include <QJsonObject>
#include <QString>
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>

#include "weir/engine.h"

namespace weir::server {

class ServerStats {
public:
    using Clock = std::chrono::steady_clock;

    ServerStats();

    void accepted();                       // a request went to the engine
    void rejected(int httpStatus);         // answered with an error before or by the engine
    void token();                          // one generated token (for throughput)
    // A request's end: outcome "stop", "length", "tool_calls", "cancelled", "error".
    void finished(const QString& outcome, const Usage& usage, double totalMs);

    // Everything, with the engine's pools and queue.
    QJsonObject toJson(const CacheStatus& cache, int activeStreams) const;

private:
    static constexpr int kWindowSeconds = 60;
    static constexpr size_t kLatencySamples = 256;
    void roll(int64_t nowSecond) const;

    Clock::time_point started_;
    uint64_t accepted_ = 0, succeeded_ = 0, cancelled_ = 0, failed_ = 0;
    uint64_t rejected4xx_ = 0, rejected503_ = 0, rejected5xx_ = 0;
    uint64_t promptTokens_ = 0, completionTokens_ = 0, cachedTokens_ = 0;
    // Tokens per second of the last kWindowSeconds, as a ring indexed by second.
    mutable std::array<uint64_t, kWindowSeconds> buckets_{};
    mutable int64_t lastSecond_ = 0;
    std::deque<double> ttftMs_, totalMs_, decodeTps_;
};

} // namespace weir::server
