#include "app/remote/remote_pool_status.h"

#include <QJsonValue>
#include <algorithm>
#include <cmath>
#include <limits>

namespace weir::remote {

QString remoteSourceName(RemoteSource s) {
    switch (s) {
    case RemoteSource::Vllm: return QStringLiteral("vLLM /metrics");
    case RemoteSource::Sglang: return QStringLiteral("SGLang /metrics");
    case RemoteSource::LlamaCpp: return QStringLiteral("llama.cpp server /metrics");
    case RemoteSource::Weir: return QStringLiteral("Weir /v1/cache/status");
    case RemoteSource::Ollama: return QStringLiteral("Ollama /api/ps");
    case RemoteSource::Unknown: break;
    }
    return QStringLiteral("unknown server");
}

namespace {

// The samples of the first of `names` that the page has. A server with several
// engines (data parallel, tensor-parallel ranks) writes one series each.
QList<const PromSample*> firstPresent(const PromText& t, const QStringList& names) {
    for (const QString& n : names) {
        QList<const PromSample*> s = t.samples(n);
        if (!s.isEmpty()) return s;
    }
    return {};
}

// Counts (requests, tokens) add up across series.
std::optional<double> sumOf(const PromText& t, const QStringList& names) {
    const QList<const PromSample*> s = firstPresent(t, names);
    if (s.isEmpty()) return std::nullopt;
    double sum = 0;
    for (const PromSample* p : s) {
        if (!std::isfinite(p->value)) return std::nullopt;
        sum += p->value;
    }
    return sum;
}

// Fractions (cache usage, hit rate) are averaged across series.
std::optional<double> meanOf(const PromText& t, const QStringList& names) {
    const QList<const PromSample*> s = firstPresent(t, names);
    double sum = 0;
    int n = 0;
    for (const PromSample* p : s) {
        if (!std::isfinite(p->value)) continue;
        sum += p->value;
        ++n;
    }
    if (n == 0) return std::nullopt;
    return sum / n;
}

std::optional<int> countOf(const PromText& t, const QStringList& names) {
    const std::optional<double> v = sumOf(t, names);
    if (!v || *v < 0) return std::nullopt;
    return int(std::lround(*v));
}

std::optional<double> fraction(std::optional<double> v) {
    if (!v) return std::nullopt;
    return std::clamp(*v, 0.0, 1.0);
}

// Increase of a counter per second between two scrapes; none when the
// interval is empty or the counter went down (the server restarted).
std::optional<double> ratePerSecond(const MetricsScrape& now, const MetricsScrape* prev, const QStringList& names) {
    if (!prev || now.atMs <= prev->atMs) return std::nullopt;
    const std::optional<double> a = sumOf(prev->text, names), b = sumOf(now.text, names);
    if (!a || !b || *b < *a) return std::nullopt;
    return (*b - *a) * 1000.0 / double(now.atMs - prev->atMs);
}

// hits / queries over the interval when both scrapes have them and queries
// grew; else over the server's lifetime.
std::optional<double> hitRatio(const MetricsScrape& now, const MetricsScrape* prev, const QStringList& hits,
                               const QStringList& queries) {
    const std::optional<double> h = sumOf(now.text, hits), q = sumOf(now.text, queries);
    if (!h || !q) return std::nullopt;
    if (prev) {
        const std::optional<double> ph = sumOf(prev->text, hits), pq = sumOf(prev->text, queries);
        if (ph && pq && *q > *pq && *h >= *ph) return std::clamp((*h - *ph) / (*q - *pq), 0.0, 1.0);
    }
    if (*q <= 0) return std::nullopt;
    return std::clamp(*h / *q, 0.0, 1.0);
}

void noteMissing(RemotePoolStatus& s) {
    const QString who = remoteSourceName(s.source);
    if (!s.kvUsage) s.notes << QStringLiteral("KV cache usage: not exposed by %1").arg(who);
    if (!s.running) s.notes << QStringLiteral("running requests: not exposed by %1").arg(who);
    if (!s.waiting) s.notes << QStringLiteral("waiting requests: not exposed by %1").arg(who);
    if (!s.prefixHitRate) s.notes << QStringLiteral("prefix-cache hit rate: not exposed by %1").arg(who);
    if (!s.tokensPerSecond) s.notes << QStringLiteral("tokens/s: not exposed by %1 (or needs a second reading)").arg(who);
}

void readVllm(RemotePoolStatus& s, const MetricsScrape& now, const MetricsScrape* prev) {
    const PromText& t = now.text;
    // V1 engine names first, the V0 engine's after.
    s.kvUsage = fraction(meanOf(t, {QStringLiteral("vllm:kv_cache_usage_perc"), QStringLiteral("vllm:gpu_cache_usage_perc")}));
    s.running = countOf(t, {QStringLiteral("vllm:num_requests_running")});
    s.waiting = countOf(t, {QStringLiteral("vllm:num_requests_waiting")});
    s.prefixHitRate = hitRatio(now, prev, {QStringLiteral("vllm:prefix_cache_hits_total"), QStringLiteral("vllm:prefix_cache_hits")},
                               {QStringLiteral("vllm:prefix_cache_queries_total"), QStringLiteral("vllm:prefix_cache_queries")});
    if (!s.prefixHitRate) s.prefixHitRate = fraction(meanOf(t, {QStringLiteral("vllm:gpu_prefix_cache_hit_rate")}));
    s.tokensPerSecond = ratePerSecond(now, prev, {QStringLiteral("vllm:generation_tokens_total"), QStringLiteral("vllm:generation_tokens")});
    // cache_config_info is an info gauge: the configuration is in its labels.
    for (const PromSample* p : t.samples(QStringLiteral("vllm:cache_config_info"))) {
        bool okBlocks = false, okSize = false;
        const qint64 blocks = p->label(QStringLiteral("num_gpu_blocks")).toLongLong(&okBlocks);
        const qint64 size = p->label(QStringLiteral("block_size")).toLongLong(&okSize);
        if (okBlocks && okSize && blocks > 0 && size > 0) s.kvCapacityTokens = s.kvCapacityTokens.value_or(0) + blocks * size;
    }
}

void readSglang(RemotePoolStatus& s, const MetricsScrape& now, const MetricsScrape* prev) {
    const PromText& t = now.text;
    s.kvUsage = fraction(meanOf(t, {QStringLiteral("sglang:token_usage")}));
    s.running = countOf(t, {QStringLiteral("sglang:num_running_reqs")});
    s.waiting = countOf(t, {QStringLiteral("sglang:num_queue_reqs")});
    s.prefixHitRate = fraction(meanOf(t, {QStringLiteral("sglang:cache_hit_rate")}));
    s.tokensPerSecond = ratePerSecond(now, prev, {QStringLiteral("sglang:generation_tokens_total")});
    // SGLang also publishes its own decode rate, good for a first reading.
    if (!s.tokensPerSecond) s.tokensPerSecond = sumOf(t, {QStringLiteral("sglang:gen_throughput")});
    if (const std::optional<double> cap = sumOf(t, {QStringLiteral("sglang:max_total_num_tokens")}); cap && *cap > 0)
        s.kvCapacityTokens = qint64(*cap);
}

// llama.cpp counts the prompt tokens it computed and those it found in a
// slot's cache apart: the cached share of all prompt tokens, over the
// interval when both scrapes have them and prompts came, else over the
// server's lifetime.
std::optional<double> llamaCppCachedShare(const MetricsScrape& now, const MetricsScrape* prev) {
    const QStringList cached{QStringLiteral("llamacpp:prompt_tokens_cached_total")};
    const QStringList computed{QStringLiteral("llamacpp:prompt_tokens_total")};
    const std::optional<double> h = sumOf(now.text, cached), c = sumOf(now.text, computed);
    if (!h || !c) return std::nullopt;
    if (prev) {
        const std::optional<double> ph = sumOf(prev->text, cached), pc = sumOf(prev->text, computed);
        if (ph && pc && *h >= *ph && *c >= *pc && (*h - *ph) + (*c - *pc) > 0)
            return std::clamp((*h - *ph) / ((*h - *ph) + (*c - *pc)), 0.0, 1.0);
    }
    if (*h + *c <= 0) return std::nullopt;
    return std::clamp(*h / (*h + *c), 0.0, 1.0);
}

void readLlamaCpp(RemotePoolStatus& s, const MetricsScrape& now, const MetricsScrape* prev) {
    const PromText& t = now.text;
    // Older servers only; newer ones get it from /slots (addLlamaCppSlots).
    s.kvUsage = fraction(meanOf(t, {QStringLiteral("llamacpp:kv_cache_usage_ratio")}));
    s.running = countOf(t, {QStringLiteral("llamacpp:requests_processing")});
    s.waiting = countOf(t, {QStringLiteral("llamacpp:requests_deferred")});
    s.prefixHitRate = llamaCppCachedShare(now, prev);
    s.tokensPerSecond = ratePerSecond(now, prev, {QStringLiteral("llamacpp:tokens_predicted_total")});
    // The server's own recent decode rate serves for a first reading.
    if (!s.tokensPerSecond) s.tokensPerSecond = sumOf(t, {QStringLiteral("llamacpp:predicted_tokens_seconds")});
}

} // namespace

RemoteSource detectMetricsSource(const PromText& text) {
    for (const PromFamily& f : text.families) {
        const QString& n = f.samples.isEmpty() ? f.name : f.samples.first().name;
        if (n.startsWith(QLatin1String("vllm:"))) return RemoteSource::Vllm;
        if (n.startsWith(QLatin1String("sglang:"))) return RemoteSource::Sglang;
        if (n.startsWith(QLatin1String("llamacpp:"))) return RemoteSource::LlamaCpp;
    }
    return RemoteSource::Unknown;
}

RemotePoolStatus poolStatusFromMetrics(const MetricsScrape& now, const MetricsScrape* previous) {
    RemotePoolStatus s;
    s.source = detectMetricsSource(now.text);
    switch (s.source) {
    case RemoteSource::Vllm: readVllm(s, now, previous); break;
    case RemoteSource::Sglang: readSglang(s, now, previous); break;
    case RemoteSource::LlamaCpp: readLlamaCpp(s, now, previous); break;
    default:
        s.notes << QStringLiteral("the /metrics page has no vLLM, SGLang or llama.cpp metrics: nothing to show");
        return s;
    }
    noteMissing(s);
    return s;
}

void addLlamaCppSlots(RemotePoolStatus& s, const QJsonArray& slotList) {
    if (slotList.isEmpty()) return;
    const QString slotsPage = QStringLiteral("llama.cpp server /slots");
    const qint64 slotCount = slotList.size();
    int busy = 0;
    qint64 sum = 0, smallest = std::numeric_limits<qint64>::max(), largest = 0, held = 0;
    for (const QJsonValue& v : slotList) {
        const QJsonObject o = v.toObject();
        if (o.value(QStringLiteral("is_processing")).toBool()) ++busy;
        const qint64 ctx = o.value(QStringLiteral("n_ctx")).toInteger();
        sum += ctx;
        smallest = std::min(smallest, ctx);
        largest = std::max(largest, ctx);
        // The tokens the slot's cache holds: its last prompt and the reply so far.
        held += o.value(QStringLiteral("n_prompt_tokens")).toInteger();
    }
    s.maxRunning = int(slotCount);
    if (largest > 0) s.slotContextTokens = largest;
    // A shared cache makes every slot report the same n_ctx, all of it, and
    // holds no more than that: only these rule it out.
    const bool split = slotCount == 1 || smallest != largest || held > largest;
    const std::optional<qint64> capacity = split && sum > 0 ? std::optional<qint64>(sum) : std::nullopt;
    if (capacity) s.kvCapacityTokens = capacity;
    if (!s.running) {
        s.running = busy;
        s.sourceOf.insert(QStringLiteral("running"), slotsPage);
        s.notes.removeIf([](const QString& n) { return n.startsWith(QLatin1String("running requests:")); });
    }
    if (s.source == RemoteSource::Unknown) s.source = RemoteSource::LlamaCpp;
    auto dropUsageNote = [&s] { s.notes.removeIf([](const QString& n) { return n.startsWith(QLatin1String("KV cache usage:")); }); };
    if (capacity && !s.kvUsage) {
        s.kvUsage = std::clamp(double(held) / double(*capacity), 0.0, 1.0);
        s.sourceOf.insert(QStringLiteral("kvUsage"), slotsPage);
        dropUsageNote();
    }
    if (capacity || largest == 0) return;
    // Not known: why, in place of the plain "not exposed".
    const QString why = QStringLiteral("llama.cpp's server does not say whether its %1 slots share one cache of %2 tokens "
                                       "(-kvu, its default without -np) or have %2 tokens each")
                            .arg(slotCount)
                            .arg(largest);
    if (s.kvUsage) {
        s.notes << QStringLiteral("KV cache size: ") + why;
    } else {
        dropUsageNote();
        s.notes << QStringLiteral("KV cache usage: ") + why;
    }
}

RemotePoolStatus poolStatusFromWeir(const QJsonObject& cache, const QJsonObject& stats) {
    RemotePoolStatus s;
    s.source = RemoteSource::Weir;
    qint64 capacity = 0, free = 0;
    for (const char* pool : {"full", "window"}) {
        const QJsonObject p = cache.value(QLatin1String(pool)).toObject();
        capacity += p.value(QStringLiteral("capacity_tokens")).toInteger();
        free += p.value(QStringLiteral("free_tokens")).toInteger();
    }
    if (capacity > 0) {
        s.kvCapacityTokens = capacity;
        s.kvUsage = std::clamp(double(capacity - free) / double(capacity), 0.0, 1.0);
    }
    if (cache.contains(QStringLiteral("running"))) s.running = cache.value(QStringLiteral("running")).toInt();
    if (cache.value(QStringLiteral("max_running")).toInt() > 0) s.maxRunning = cache.value(QStringLiteral("max_running")).toInt();
    if (cache.contains(QStringLiteral("waiting"))) s.waiting = cache.value(QStringLiteral("waiting")).toInt();
    const QJsonObject tokens = stats.value(QStringLiteral("tokens")).toObject();
    const qint64 prompt = tokens.value(QStringLiteral("prompt")).toInteger();
    if (prompt > 0) s.prefixHitRate = std::clamp(double(tokens.value(QStringLiteral("cached_prompt")).toInteger()) / double(prompt), 0.0, 1.0);
    const QJsonValue tps = stats.value(QStringLiteral("throughput")).toObject().value(QStringLiteral("generated_tokens_per_second"));
    if (tps.isDouble()) s.tokensPerSecond = tps.toDouble();
    noteMissing(s);
    return s;
}

RemotePoolStatus poolStatusFromOllama(const QJsonObject& ps) {
    RemotePoolStatus s;
    s.source = RemoteSource::Ollama;
    for (const QJsonValue& v : ps.value(QStringLiteral("models")).toArray()) {
        const QJsonObject m = v.toObject();
        const QString name = m.value(QStringLiteral("name")).toString(m.value(QStringLiteral("model")).toString());
        if (!name.isEmpty()) s.loadedModels << name;
    }
    noteMissing(s);
    return s;
}

} // namespace weir::remote
