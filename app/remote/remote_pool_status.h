#pragma once
// What the pool monitor draws for a remote engine, read from what that server
// exposes: a /metrics scrape (vLLM, SGLang, llama.cpp's server), llama.cpp's
// /slots, Weir's own /v1/cache/status and /v1/stats, Ollama's /api/ps. Every
// gauge is optional: a server that does not expose it leaves it empty, which
// the monitor shows as "not exposed" rather than as zero.
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <optional>

#include "app/remote/prometheus_text.h"

namespace weir::remote {

enum class RemoteSource { Unknown, Vllm, Sglang, LlamaCpp, Weir, Ollama };

// "vLLM /metrics", "SGLang /metrics", "llama.cpp server /metrics", "Weir", "Ollama".
QString remoteSourceName(RemoteSource s);

struct RemotePoolStatus {
    RemoteSource source = RemoteSource::Unknown;
    std::optional<double> kvUsage;            // fraction of the KV cache in use, 0..1
    std::optional<qint64> kvCapacityTokens;   // tokens the KV cache holds, where the server says
    std::optional<qint64> slotContextTokens;  // llama.cpp: the tokens one slot (one request) may hold
    std::optional<int> running;               // requests being decoded
    std::optional<int> waiting;               // requests queued behind them
    std::optional<int> maxRunning;            // slots / most requests run at once
    std::optional<double> prefixHitRate;      // 0..1: share of prompt tokens (or blocks) found cached
    std::optional<double> tokensPerSecond;    // generated tokens per second
    QStringList loadedModels;                 // Ollama: the models in memory
    // Where a gauge was read when not from `source`'s own page, by the gauge's
    // key ("kvUsage", "running"): llama.cpp's /slots fills what its /metrics lacks.
    QHash<QString, QString> sourceOf;
    QStringList notes;                        // why something is missing, in plain words
};

// One /metrics page and when it was read (for rates between two scrapes).
struct MetricsScrape {
    PromText text;
    qint64 atMs = 0;   // a monotonic clock, milliseconds
};

// The server whose metrics these are, from their prefixes ("vllm:", "sglang:",
// "llamacpp:"); Unknown when none is there.
RemoteSource detectMetricsSource(const PromText& text);

// The status from one scrape and, when given, the scrape before it: rates
// (tokens/s, vLLM's prefix-cache hit rate) come from counter differences over
// that interval; a counter that went down (the server restarted) gives none.
RemotePoolStatus poolStatusFromMetrics(const MetricsScrape& now, const MetricsScrape* previous = nullptr);

// llama.cpp's GET /slots (an array, one object per slot): the number of slots
// and the context each may hold; fills running from the busy slots, and the
// KV cache in use from the tokens each slot's cache holds, when the metrics
// did not (servers since mid-2025 dropped their KV gauges from /metrics).
// Slots that share one KV cache (-kvu, the server's default when -np is not
// given) each report the whole cache as their n_ctx, and neither /slots nor
// /props says whether they share it: the slots' sum is taken as the cache
// only when it cannot be a shared one (one slot, slots of different sizes,
// or more tokens held than one slot's context); otherwise the size and the
// usage are left out, with a note that says why.
void addLlamaCppSlots(RemotePoolStatus& status, const QJsonArray& slotList);

// Weir's GET /v1/cache/status and, when read, GET /v1/stats.
RemotePoolStatus poolStatusFromWeir(const QJsonObject& cacheStatus, const QJsonObject& stats = {});

// Ollama's GET /api/ps: which models are loaded; Ollama exposes no KV cache
// usage, queue or throughput.
RemotePoolStatus poolStatusFromOllama(const QJsonObject& ps);

} // namespace weir::remote
