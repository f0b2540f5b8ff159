#include "app/server/server_stats.h"

#include <QJsonArray>
#include <algorithm>
#include <vector>

namespace weir::server {

namespace {

QJsonObject summary(const std::deque<double>& samples) {
    QJsonObject o;
    o.insert(QStringLiteral("samples"), qint64(samples.size()));
    if (samples.empty()) {
        o.insert(QStringLiteral("mean"), QJsonValue::Null);
        o.insert(QStringLiteral("p50"), QJsonValue::Null);
        o.insert(QStringLiteral("p95"), QJsonValue::Null);
        o.insert(QStringLiteral("max"), QJsonValue::Null);
        return o;
    }
    std::vector<double> v(samples.begin(), samples.end());
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    auto pct = [&v](double q) { return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))]; };
    o.insert(QStringLiteral("mean"), sum / double(v.size()));
    o.insert(QStringLiteral("p50"), pct(0.5));
    o.insert(QStringLiteral("p95"), pct(0.95));
    o.insert(QStringLiteral("max"), v.back());
    return o;
}

void keep(std::deque<double>& d, double v, size_t n) {
    d.push_back(v);
    while (d.size() > n) d.pop_front();
}

QJsonObject pool(const PoolStatus& p) {
    QJsonObject o;
    o.insert(QStringLiteral("capacity_tokens"), qint64(p.capacityTokens));
    o.insert(QStringLiteral("free_tokens"), qint64(p.freeTokens));
    o.insert(QStringLiteral("owned_tokens"), qint64(p.ownedTokens));
    o.insert(QStringLiteral("cached_tokens"), qint64(p.cachedTokens));
    o.insert(QStringLiteral("occupancy"),
             p.capacityTokens > 0 ? double(p.capacityTokens - p.freeTokens) / double(p.capacityTokens) : 0.0);
    return o;
}

} // namespace

ServerStats::ServerStats() : started_(Clock::now()) {}

void ServerStats::roll(int64_t now) const {
    if (now - lastSecond_ >= kWindowSeconds) {
        buckets_.fill(0);
    } else {
        for (int64_t s = lastSecond_ + 1; s <= now; ++s) buckets_[size_t(s % kWindowSeconds)] = 0;
    }
    lastSecond_ = std::max(lastSecond_, now);
}

void ServerStats::accepted() { ++accepted_; }

void ServerStats::rejected(int status) {
    if (status == 503) ++rejected503_;
    else if (status >= 500) ++rejected5xx_;
    else ++rejected4xx_;
}

void ServerStats::token() {
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started_).count();
    roll(now);
    ++buckets_[size_t(now % kWindowSeconds)];
}

void ServerStats::finished(const QString& outcome, const Usage& usage, double totalMs) {
    if (outcome == QLatin1String("cancelled")) ++cancelled_;
    else if (outcome == QLatin1String("error")) ++failed_;
    else ++succeeded_;
    promptTokens_ += uint64_t(std::max(usage.promptTokens, 0));
    completionTokens_ += uint64_t(std::max(usage.completionTokens, 0));
    cachedTokens_ += uint64_t(std::max(usage.cachedPromptTokens, 0));
    if (outcome == QLatin1String("cancelled") || outcome == QLatin1String("error")) return;
    if (usage.completionTokens > 0) keep(ttftMs_, usage.timeToFirstTokenMs, kLatencySamples);
    keep(totalMs_, totalMs, kLatencySamples);
    if (usage.decodeTokensPerSecond > 0) keep(decodeTps_, usage.decodeTokensPerSecond, kLatencySamples);
}

QJsonObject ServerStats::toJson(const CacheStatus& cache, int activeStreams) const {
    const double uptime = std::chrono::duration<double>(Clock::now() - started_).count();
    const int64_t now = int64_t(uptime);
    roll(now);
    uint64_t windowTokens = 0;
    for (uint64_t b : buckets_) windowTokens += b;
    const double window = std::min<double>(kWindowSeconds, std::max(uptime, 1.0));

    QJsonObject requests;
    requests.insert(QStringLiteral("accepted"), qint64(accepted_));
    requests.insert(QStringLiteral("succeeded"), qint64(succeeded_));
    requests.insert(QStringLiteral("cancelled"), qint64(cancelled_));
    requests.insert(QStringLiteral("failed"), qint64(failed_));
    requests.insert(QStringLiteral("rejected_4xx"), qint64(rejected4xx_));
    requests.insert(QStringLiteral("rejected_503"), qint64(rejected503_));
    requests.insert(QStringLiteral("rejected_5xx"), qint64(rejected5xx_));
    requests.insert(QStringLiteral("in_flight"), activeStreams);

    QJsonObject tokens;
    tokens.insert(QStringLiteral("prompt"), qint64(promptTokens_));
    tokens.insert(QStringLiteral("completion"), qint64(completionTokens_));
    tokens.insert(QStringLiteral("cached_prompt"), qint64(cachedTokens_));

    QJsonObject throughput;
    throughput.insert(QStringLiteral("window_seconds"), window);
    throughput.insert(QStringLiteral("generated_tokens_per_second"), double(windowTokens) / window);
    throughput.insert(QStringLiteral("per_request_decode_tokens_per_second"), summary(decodeTps_));

    QJsonObject latency;
    latency.insert(QStringLiteral("time_to_first_token_ms"), summary(ttftMs_));
    latency.insert(QStringLiteral("request_ms"), summary(totalMs_));

    QJsonObject pools;
    pools.insert(QStringLiteral("full"), pool(cache.full));
    pools.insert(QStringLiteral("window"), pool(cache.window));

    QJsonObject o;
    o.insert(QStringLiteral("uptime_seconds"), uptime);
    o.insert(QStringLiteral("requests"), requests);
    o.insert(QStringLiteral("tokens"), tokens);
    o.insert(QStringLiteral("throughput"), throughput);
    o.insert(QStringLiteral("latency"), latency);
    o.insert(QStringLiteral("pools"), pools);
    o.insert(QStringLiteral("running"), cache.running);
    o.insert(QStringLiteral("waiting"), cache.waiting);
    return o;
}

} // namespace weir::server
