// The remote pool status per server kind: vLLM, SGLang and llama.cpp's server
// from their /metrics pages (fixtures/), rates from two scrapes, llama.cpp's
// /slots, Weir's /v1/cache/status and /v1/stats, Ollama's /api/ps; what a
// server does not expose stays empty and is said, never drawn as zero.
#include <QtTest>

#include <QFile>
#include <QJsonDocument>

#include "app/remote/remote_pool_status.h"

using namespace weir::remote;

namespace {

QByteArray fixture(const char* name) {
    QFile f(QStringLiteral(WEIR_REMOTE_FIXTURES "/") + QLatin1String(name));
    if (!f.open(QIODevice::ReadOnly)) qFatal("fixture %s missing", name);
    return f.readAll();
}

MetricsScrape scrape(const QByteArray& body, qint64 atMs) {
    const PromParseResult r = parsePrometheusText(body);
    if (!r.ok) qFatal("%s", qPrintable(r.error));
    return {r.text, atMs};
}

bool notes(const RemotePoolStatus& s, const char* what) {
    for (const QString& n : s.notes)
        if (n.startsWith(QLatin1String(what)) && n.contains(QLatin1String("not exposed"))) return true;
    return false;
}

// A note that starts with `what`.
bool said(const RemotePoolStatus& s, const char* what) {
    for (const QString& n : s.notes)
        if (n.startsWith(QLatin1String(what))) return true;
    return false;
}

QJsonObject json(const char* text) { return QJsonDocument::fromJson(text).object(); }

} // namespace

class RemotePoolStatusTest : public QObject {
    Q_OBJECT
private slots:
    void vllmOneScrape() {
        const RemotePoolStatus s = poolStatusFromMetrics(scrape(fixture("vllm_v1.prom"), 1000));
        QCOMPARE(s.source, RemoteSource::Vllm);
        QCOMPARE(s.kvUsage.value_or(-1), 0.4125);
        QCOMPARE(s.running.value_or(-1), 3);
        QCOMPARE(s.waiting.value_or(-1), 2);
        QCOMPARE(s.prefixHitRate.value_or(-1), 0.25);   // 3000 of 12000 since the start
        QCOMPARE(s.kvCapacityTokens.value_or(-1), qint64(2048 * 16));
        QVERIFY(!s.tokensPerSecond);                    // a rate needs two readings
        QVERIFY(notes(s, "tokens/s"));
        QVERIFY(!notes(s, "KV cache usage"));
    }

    void vllmRatesBetweenTwoScrapes() {
        QByteArray later = fixture("vllm_v1.prom");
        later.replace("generation_tokens_total{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"} 4500.0",
                      "generation_tokens_total{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"} 4800.0");
        later.replace("prefix_cache_queries_total{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"} 12000.0",
                      "prefix_cache_queries_total{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"} 13000.0");
        later.replace("prefix_cache_hits_total{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"} 3000.0",
                      "prefix_cache_hits_total{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"} 3900.0");
        const MetricsScrape a = scrape(fixture("vllm_v1.prom"), 10'000), b = scrape(later, 12'000);
        const RemotePoolStatus s = poolStatusFromMetrics(b, &a);
        QCOMPARE(s.tokensPerSecond.value_or(-1), 150.0);   // 300 tokens in 2 s
        QCOMPARE(s.prefixHitRate.value_or(-1), 0.9);       // 900 of the last 1000
        QVERIFY(!notes(s, "tokens/s"));
        // A counter that went down: the server restarted; no rate this time.
        const RemotePoolStatus restarted = poolStatusFromMetrics(a, &b);
        QVERIFY(!restarted.tokensPerSecond);
    }

    void vllmV0NamesAndSeveralEngines() {
        const RemotePoolStatus s = poolStatusFromMetrics(scrape(
            "# TYPE vllm:gpu_cache_usage_perc gauge\n"
            "vllm:gpu_cache_usage_perc{model_name=\"m\",engine=\"0\"} 0.2\n"
            "vllm:gpu_cache_usage_perc{model_name=\"m\",engine=\"1\"} 0.6\n"
            "# TYPE vllm:num_requests_running gauge\n"
            "vllm:num_requests_running{model_name=\"m\",engine=\"0\"} 2.0\n"
            "vllm:num_requests_running{model_name=\"m\",engine=\"1\"} 5.0\n"
            "# TYPE vllm:gpu_prefix_cache_hit_rate gauge\n"
            "vllm:gpu_prefix_cache_hit_rate{model_name=\"m\"} 0.5\n", 0));
        QCOMPARE(s.source, RemoteSource::Vllm);
        QCOMPARE(s.kvUsage.value_or(-1), 0.4);   // averaged across engines
        QCOMPARE(s.running.value_or(-1), 7);     // summed
        QVERIFY(!s.waiting);
        QVERIFY(notes(s, "waiting requests"));
        QCOMPARE(s.prefixHitRate.value_or(-1), 0.5);
    }

    void sglang() {
        const MetricsScrape a = scrape(fixture("sglang.prom"), 0);
        RemotePoolStatus s = poolStatusFromMetrics(a);
        QCOMPARE(s.source, RemoteSource::Sglang);
        QCOMPARE(s.kvUsage.value_or(-1), 0.31);
        QCOMPARE(s.running.value_or(-1), 37);
        QCOMPARE(s.waiting.value_or(-1), 12);
        QCOMPARE(s.prefixHitRate.value_or(-1), 0.4172930293042116);
        QCOMPARE(s.tokensPerSecond.value_or(-1), 412.7730519044163);   // its own gauge on a first reading
        QByteArray later = fixture("sglang.prom");
        later.replace("sglang:generation_tokens_total{model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 4.902113e+06",
                      "sglang:generation_tokens_total{model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 4.902313e+06");
        const MetricsScrape b = scrape(later, 4000);
        s = poolStatusFromMetrics(b, &a);
        QCOMPARE(s.tokensPerSecond.value_or(-1), 50.0);   // 200 tokens in 4 s
    }

    void llamaCppMetricsAndSlots() {
        const MetricsScrape a = scrape(fixture("llamacpp.prom"), 0);
        QByteArray later = fixture("llamacpp.prom");
        later.replace("llamacpp:tokens_predicted_total 2750", "llamacpp:tokens_predicted_total 2850");
        RemotePoolStatus s = poolStatusFromMetrics(scrape(later, 500), &a);
        QCOMPARE(s.source, RemoteSource::LlamaCpp);
        QCOMPARE(s.kvUsage.value_or(-1), 0.25);
        QCOMPARE(s.running.value_or(-1), 1);
        QCOMPARE(s.waiting.value_or(-1), 2);
        QCOMPARE(s.tokensPerSecond.value_or(-1), 200.0);
        QVERIFY(!s.prefixHitRate);
        QVERIFY(notes(s, "prefix-cache hit rate"));
        addLlamaCppSlots(s, QJsonDocument::fromJson(
                                R"([{"id":0,"n_ctx":4096,"is_processing":true},{"id":1,"n_ctx":4096,"is_processing":false}])")
                                .array());
        QCOMPARE(s.maxRunning.value_or(-1), 2);
        QCOMPARE(s.slotContextTokens.value_or(-1), qint64(4096));
        // Two slots of 4,096: one shared cache or two; the server does not say which.
        QVERIFY(!s.kvCapacityTokens);
        QVERIFY(said(s, "KV cache size: llama.cpp's server does not say whether its 2 slots share one cache of 4096 tokens"));
        QCOMPARE(s.running.value_or(-1), 1);
    }

    void llamaCppWithoutKvMetricsUsesSlotsForRunning() {
        // A build whose /metrics lacks the KV and request gauges.
        RemotePoolStatus s = poolStatusFromMetrics(scrape("# TYPE llamacpp:tokens_predicted_total counter\n"
                                                          "llamacpp:tokens_predicted_total 10\n", 0));
        QVERIFY(!s.kvUsage);
        QVERIFY(notes(s, "KV cache usage"));
        QVERIFY(notes(s, "running requests"));
        addLlamaCppSlots(s, QJsonDocument::fromJson(
                                R"([{"id":0,"n_ctx":2048,"is_processing":true},{"id":1,"n_ctx":2048,"is_processing":true},
                                    {"id":2,"n_ctx":2048,"is_processing":false}])").array());
        QCOMPARE(s.running.value_or(-1), 2);
        QVERIFY(!notes(s, "running requests"));
        QCOMPARE(s.maxRunning.value_or(-1), 3);
    }

    // llama.cpp since mid-2025 (the one llama-cpp-python 0.3.36 vendors): no
    // KV gauge in /metrics, cached prompt tokens counted apart, its own decode
    // rate as a gauge; the KV cache in use comes from what the slots hold.
    void llamaCppWithoutKvGaugeUsesSlotsForKv() {
        RemotePoolStatus s = poolStatusFromMetrics(scrape("# TYPE llamacpp:prompt_tokens_total counter\n"
                                                          "llamacpp:prompt_tokens_total 300\n"
                                                          "# TYPE llamacpp:prompt_tokens_cached_total counter\n"
                                                          "llamacpp:prompt_tokens_cached_total 100\n"
                                                          "# TYPE llamacpp:tokens_predicted_total counter\n"
                                                          "llamacpp:tokens_predicted_total 50\n"
                                                          "# TYPE llamacpp:predicted_tokens_seconds gauge\n"
                                                          "llamacpp:predicted_tokens_seconds 42.5\n"
                                                          "# TYPE llamacpp:requests_processing gauge\n"
                                                          "llamacpp:requests_processing 1\n"
                                                          "# TYPE llamacpp:requests_deferred gauge\n"
                                                          "llamacpp:requests_deferred 0\n", 0));
        QCOMPARE(s.prefixHitRate.value_or(-1), 0.25);     // 100 cached of 400
        QCOMPARE(s.tokensPerSecond.value_or(-1), 42.5);   // the server's own rate, for a first reading
        QVERIFY(!s.kvUsage);
        // More held than one slot's context: no shared cache of 1,024 could, so two of 1,024.
        addLlamaCppSlots(s, QJsonDocument::fromJson(R"([{"id":0,"n_ctx":1024,"is_processing":true,"n_prompt_tokens":768},
                                                        {"id":1,"n_ctx":1024,"is_processing":false,"n_prompt_tokens":512}])").array());
        QCOMPARE(s.kvCapacityTokens.value_or(-1), qint64(2048));
        QCOMPARE(s.kvUsage.value_or(-1), 0.625);          // 1,280 of 2,048 held
        QCOMPARE(s.sourceOf.value(QStringLiteral("kvUsage")), QStringLiteral("llama.cpp server /slots"));
        QVERIFY(!notes(s, "KV cache usage"));
        QCOMPARE(s.running.value_or(-1), 1);
        QVERIFY(!s.sourceOf.contains(QStringLiteral("running")));   // from /metrics
    }

    // Captured from llama.cpp's own server (fixtures/README.md): SmolLM2 with
    // -np 2 -c 2048, once with one cache shared by the slots (-kvu) and once
    // split. Shared, each slot reports the whole 2,048 (its /props too, with
    // no word of the sharing), so their sum, 4,096, is no cache there is; the
    // split slots report 1,024 each. The two pages differ in nothing else the
    // server says, so neither size is claimed: the note says why.
    void llamaCppSlotsSharingOneCacheAreNotSummed() {
        for (const char* name : {"llamacpp_slots_kvu.json", "llamacpp_slots_split.json"}) {
            RemotePoolStatus s;
            const QJsonArray slotList = QJsonDocument::fromJson(fixture(name)).array();
            QCOMPARE(slotList.size(), 2);
            addLlamaCppSlots(s, slotList);
            QVERIFY2(!s.kvCapacityTokens, name);
            QVERIFY2(!s.kvUsage, name);
            QCOMPARE(s.maxRunning.value_or(-1), 2);
            const qint64 each = slotList[0][QLatin1String("n_ctx")].toInteger();
            QCOMPARE(s.slotContextTokens.value_or(-1), each);
            QVERIFY2(said(s, qPrintable(QStringLiteral("KV cache usage: llama.cpp's server does not say whether its 2 slots "
                                                       "share one cache of %1 tokens").arg(each))),
                     qPrintable(s.notes.join(QStringLiteral("; "))));
        }
    }

    // One slot: its context is the cache, shared or not.
    void llamaCppOneSlotIsTheCache() {
        RemotePoolStatus s;
        addLlamaCppSlots(s, QJsonDocument::fromJson(R"([{"id":0,"n_ctx":4096,"is_processing":true,"n_prompt_tokens":1024}])").array());
        QCOMPARE(s.source, RemoteSource::LlamaCpp);
        QCOMPARE(s.kvCapacityTokens.value_or(-1), qint64(4096));
        QCOMPARE(s.kvUsage.value_or(-1), 0.25);
    }

    void unknownPageSaysSo() {
        const RemotePoolStatus s = poolStatusFromMetrics(scrape("process_cpu_seconds_total 12\n", 0));
        QCOMPARE(s.source, RemoteSource::Unknown);
        QVERIFY(!s.kvUsage && !s.running && !s.waiting && !s.prefixHitRate && !s.tokensPerSecond);
        QCOMPARE(s.notes.size(), 1);
        QVERIFY(s.notes[0].contains(QLatin1String("nothing to show")));
    }

    void weir() {
        // The shape of Weir's /v1/cache/status and /v1/stats (app/server).
        const QJsonObject cache = json(R"({"full":{"name":"full","capacity_tokens":8192,"free_tokens":6144},
                                           "window":{"name":"window","capacity_tokens":0,"free_tokens":0},
                                           "requests":[],"running":2,"max_running":8,"waiting":1,"device":"cpu"})");
        const QJsonObject stats = json(R"({"tokens":{"prompt":1000,"completion":300,"cached_prompt":400},
                                           "throughput":{"window_seconds":60,"generated_tokens_per_second":12.5}})");
        const RemotePoolStatus s = poolStatusFromWeir(cache, stats);
        QCOMPARE(s.source, RemoteSource::Weir);
        QCOMPARE(s.kvUsage.value_or(-1), 0.25);
        QCOMPARE(s.kvCapacityTokens.value_or(-1), qint64(8192));
        QCOMPARE(s.running.value_or(-1), 2);
        QCOMPARE(s.maxRunning.value_or(-1), 8);
        QCOMPARE(s.waiting.value_or(-1), 1);
        QCOMPARE(s.prefixHitRate.value_or(-1), 0.4);
        QCOMPARE(s.tokensPerSecond.value_or(-1), 12.5);
        QVERIFY(s.notes.isEmpty());
        // Without /v1/stats: the pools and the queue, and the rest said missing.
        const RemotePoolStatus bare = poolStatusFromWeir(cache);
        QVERIFY(!bare.prefixHitRate && !bare.tokensPerSecond);
        // An older Weir, which did not say how many it runs at once.
        QJsonObject older = cache;
        older.remove(QStringLiteral("max_running"));
        QVERIFY(!poolStatusFromWeir(older).maxRunning);
        QVERIFY(notes(bare, "tokens/s"));
    }

    void ollama() {
        const RemotePoolStatus s = poolStatusFromOllama(json(
            R"({"models":[{"name":"llama3.2:latest","model":"llama3.2:latest","size":3383340032,"size_vram":3383340032,
                           "expires_at":"2026-12-04T22:00:00Z","context_length":4096}]})"));
        QCOMPARE(s.source, RemoteSource::Ollama);
        QCOMPARE(s.loadedModels, QStringList{QStringLiteral("llama3.2:latest")});
        QVERIFY(!s.kvUsage && !s.running && !s.waiting && !s.prefixHitRate && !s.tokensPerSecond);
        QVERIFY(notes(s, "KV cache usage"));
        QVERIFY(s.notes[0].contains(QLatin1String("Ollama")));
    }
};

QTEST_GUILESS_MAIN(RemotePoolStatusTest)
#include "remote_pool_status_test.moc"
