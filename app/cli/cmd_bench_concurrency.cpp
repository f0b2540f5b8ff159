// weir-cli bench-concurrency: what continuous batching and prefix sharing buy.
//   1. decode speed of one conversation alone;
//   2. aggregate decode speed of N conversations at once (steady state: from
//      the moment all N are decoding until the first one finishes), and the
//      thread pool's round trips (synchronisation points) per step there;
//   3. time to first token of a conversation with a long system prompt, then of
//      a second conversation sharing that prompt (prefix cache), and of the
//      second again with the cache flushed;
//   4. time to first token under load: --load-requests requests at once, long
//      and short prompts alternating, more than --concurrency can run: TTFT
//      percentiles (all, and the short prompts alone) and how many ran at once.
// With --step-split, step 2 runs again with the step profile on
// (weir/step_profile.h) and its steady window's steps are split by where
// their time went: ops, the scheduler and sampling, the pool's round trips.
// Prints JSON.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "app/cli/step_split_json.h"
#include "weir/engine.h"
#include "app/cli/soak.h"
#include "weir/step_profile.h"
#include "weir/thread_pool_counters.h"
#include "weir/base/error.h"
#include "weir/types/engine_limits.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Run {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<Clock::time_point> tokenTimes;
    std::vector<uint64_t> tokenRoundTrips;  // the pools' round trips so far, at each token
    bool profiled = false;                   // keep the step profile at each token
    std::vector<weir::StepProfile> tokenProfiles;
    bool done = false;
    weir::Event terminal;

    weir::EventSink sink() {
        return [this](const weir::Event& ev) {
            std::lock_guard<std::mutex> lock(mutex);
            if (ev.kind == weir::Event::Kind::Token) {
                tokenTimes.push_back(Clock::now());
                tokenRoundTrips.push_back(weir::threadPoolCounters().roundTrips);
                if (profiled) tokenProfiles.push_back(weir::stepProfile());
            } else {
                done = true;
                terminal = ev;
                cv.notify_all();
            }
        };
    }
    void wait() {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] { return done; });
        if (terminal.kind != weir::Event::Kind::Done)
            throw weir::Error("bench-concurrency: a request ended with " +
                              std::string(terminal.kind == weir::Event::Kind::Error ? "an error: " : "cancel: ") +
                              terminal.text);
    }
};

weir::GenerateRequest makeRequest(std::vector<int32_t> prompt, int32_t maxTokens) {
    weir::GenerateRequest r;
    r.prompt = std::move(prompt);
    r.maxTokens = maxTokens;
    r.sampling.temperature = 0.0f;
    r.stopAtEndOfGeneration = false;  // always the full length, so runs compare
    return r;
}

std::vector<int32_t> userPrompt(weir::Engine& e, int i, int32_t approxTokens) {
    std::string text = "Conversation " + std::to_string(i) + ": ";
    while (int32_t(e.tokenize(text, false).size()) < approxTokens)
        text += "please explain clause " + std::to_string(i * 7 + int(text.size()) % 13) + " of the policy. ";
    return e.tokenizeChat({{"user", text, {}}});
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

struct LoadResult {
    std::vector<double> ttft, ttftShort;
    double meanRunning = 0, seconds = 0;
    int32_t maxRunning = 0;
};

// All requests submitted at once; long and short prompts alternate.
LoadResult runLoad(weir::Engine& engine, int32_t requests, int32_t longTokens, int32_t shortTokens, int32_t gen) {
    LoadResult out;
    std::vector<std::unique_ptr<Run>> runs;
    const auto start = Clock::now();
    for (int32_t i = 0; i < requests; ++i) {
        runs.push_back(std::make_unique<Run>());
        const int32_t n = i % 2 == 0 ? longTokens : shortTokens;
        engine.submit(makeRequest(userPrompt(engine, 100 + i, n), gen), runs.back()->sink());
    }
    std::atomic<bool> sampling{true};
    uint64_t samples = 0, sum = 0;
    std::thread sampler([&] {
        while (sampling.load()) {
            const weir::CacheStatus st = engine.cacheStatus();
            ++samples;
            sum += uint64_t(st.running);
            out.maxRunning = std::max(out.maxRunning, st.running);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    for (auto& r : runs) r->wait();
    sampling.store(false);
    sampler.join();
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    out.meanRunning = samples ? double(sum) / double(samples) : 0.0;
    for (size_t i = 0; i < runs.size(); ++i) {
        const double t = runs[i]->terminal.usage.timeToFirstTokenMs;
        out.ttft.push_back(t);
        if (i % 2 == 1) out.ttftShort.push_back(t);
    }
    return out;
}

struct Concurrent {
    double aggregateTps = 0, meanPerRequest = 0, roundTripsPerStep = 0;
    std::string splitJson;  // profiled runs: the steady window's step split
};

// n conversations at once: the aggregate decode speed in the steady state
// (from the moment all n decode until the first one finishes).
Concurrent runConcurrent(weir::Engine& engine, int n, int32_t promptTokens, int32_t genTokens, bool profiled) {
    std::vector<std::unique_ptr<Run>> runs;
    for (int i = 0; i < n; ++i) {
        runs.push_back(std::make_unique<Run>());
        runs.back()->profiled = profiled;
    }
    for (int i = 0; i < n; ++i)
        engine.submit(makeRequest(userPrompt(engine, i + 1, promptTokens), genTokens), runs[size_t(i)]->sink());
    for (auto& r : runs) r->wait();
    Clock::time_point allDecoding = Clock::time_point::min(), firstFinished = Clock::time_point::max();
    for (auto& r : runs) {
        allDecoding = std::max(allDecoding, r->tokenTimes.front());
        firstFinished = std::min(firstFinished, r->tokenTimes.back());
    }
    Concurrent out;
    int64_t steadyTokens = 0;
    for (auto& r : runs)
        for (auto t : r->tokenTimes) steadyTokens += (t > allDecoding && t <= firstFinished) ? 1 : 0;
    const double steadySeconds = std::chrono::duration<double>(firstFinished - allDecoding).count();
    out.aggregateTps = steadySeconds > 0 ? double(steadyTokens) / steadySeconds : 0.0;
    for (auto& r : runs) out.meanPerRequest += r->terminal.usage.decodeTokensPerSecond / n;
    // Between the first conversation's first and last token of the steady
    // window, per token of it: per step when each step gives each
    // conversation one token (without speculative drafts).
    const Run& r = *runs.front();
    size_t first = SIZE_MAX, last = 0;
    for (size_t i = 0; i < r.tokenTimes.size(); ++i)
        if (r.tokenTimes[i] > allDecoding && r.tokenTimes[i] <= firstFinished) first = std::min(first, i), last = i;
    if (first != SIZE_MAX && last > first) {
        const uint64_t steps = last - first;
        out.roundTripsPerStep = double(r.tokenRoundTrips[last] - r.tokenRoundTrips[first]) / double(steps);
        if (profiled)
            out.splitJson = weir::cli::stepSplitJson(
                r.tokenProfiles[last] - r.tokenProfiles[first],
                std::chrono::duration<double>(r.tokenTimes[last] - r.tokenTimes[first]).count(), steps);
    }
    return out;
}

int run(const std::vector<std::string>& argv) {
    weir::cli::Args args(argv);
    weir::EngineOptions eo;
    const int32_t n = int32_t(args.intValue("--concurrency", 4, 1, weir::EngineLimits::kMaxRunningRequests));
    eo.maxRunningRequests = n;
    const int32_t promptTokens = int32_t(args.intValue("--prompt-tokens", 64, 1, 1 << 20));
    const int32_t genTokens = int32_t(args.intValue("--gen-tokens", 64, 2, 1 << 20));
    const int32_t systemTokens = int32_t(args.intValue("--system-prompt-tokens", 7700, 1, 1 << 20));
    eo.maxContext = systemTokens + 1024;
    weir::cli::readEngineFlags(args, eo);
    const bool skipPrefix = args.flag("--no-prefix");
    const int32_t loadRequests = int32_t(args.intValue("--load-requests", 4 * n, 0, 1 << 20));
    const int32_t loadLong = int32_t(args.intValue("--load-long-tokens", 1024, 1, 1 << 20));
    const int32_t loadShort = int32_t(args.intValue("--load-short-tokens", 64, 1, 1 << 20));
    const int32_t loadGen = int32_t(args.intValue("--load-gen-tokens", 16, 1, 1 << 16));
    const bool stepSplit = args.flag("--step-split");
    args.rejectUnknown();

    weir::Engine engine(eo);

    // 1. One conversation alone.
    Run single;
    engine.submit(makeRequest(userPrompt(engine, 0, promptTokens), genTokens), single.sink());
    single.wait();
    const double singleTps = single.terminal.usage.decodeTokensPerSecond;

    // 2. N at once (and again, profiled, for --step-split).
    const Concurrent together = runConcurrent(engine, n, promptTokens, genTokens, false);
    std::string split;
    if (stepSplit) {
        weir::setStepProfiling(true);
        split = runConcurrent(engine, n, promptTokens, genTokens, true).splitJson;
        weir::setStepProfiling(false);
    }
    const double aggregateTps = together.aggregateTps, meanPerRequest = together.meanPerRequest;
    const double steadyRoundTripsPerStep = together.roundTripsPerStep;

    // 3. Time to first token with and without a shared system prompt.
    double ttftFirst = 0, ttftShared = 0, ttftUnshared = 0;
    int32_t cachedShared = 0, sysTokens = 0;
    if (!skipPrefix) {
        engine.clearPrefixCache();
        const std::string system = weir::cli::makeSystemPrompt(engine, systemTokens);
        sysTokens = int32_t(engine.tokenize(system, false).size());
        auto conversation = [&](const std::string& user) {
            return engine.tokenizeChat({{"system", system, {}}, {"user", user, {}}});
        };
        Run first, second, third;
        engine.submit(makeRequest(conversation("What does clause 3 require?"), 8), first.sink());
        first.wait();
        engine.submit(makeRequest(conversation("Summarise clause 12 in one line."), 8), second.sink());
        second.wait();
        engine.clearPrefixCache();
        engine.submit(makeRequest(conversation("Summarise clause 12 in one line."), 8), third.sink());
        third.wait();
        ttftFirst = first.terminal.usage.timeToFirstTokenMs;
        ttftShared = second.terminal.usage.timeToFirstTokenMs;
        ttftUnshared = third.terminal.usage.timeToFirstTokenMs;
        cachedShared = second.terminal.usage.cachedPromptTokens;
    }

    // 4. Time to first token under load.
    LoadResult load;
    if (loadRequests > 0) {
        engine.clearPrefixCache();
        load = runLoad(engine, loadRequests, loadLong, loadShort, std::max(loadGen, 1));
    }

    const weir::CacheStatus st = engine.cacheStatus();
    std::printf("{\n");
    std::printf("  \"model\": \"%s\",\n", engine.modelConfig().name.c_str());
    std::printf("  \"threads\": %d,\n", eo.threads);
    std::printf("  \"physical_cores\": %d,\n", weir::EngineLimits::physicalCores());
    std::printf("  \"numa_nodes\": %d,\n", weir::EngineLimits::numaNodes());
    std::printf("  \"concurrency\": %d,\n", n);
    std::printf("  \"prompt_tokens\": %d,\n  \"gen_tokens\": %d,\n", promptTokens, genTokens);
    std::printf("  \"single_decode_tps\": %.2f,\n", singleTps);
    std::printf("  \"aggregate_decode_tps\": %.2f,\n", aggregateTps);
    std::printf("  \"aggregate_over_single\": %.2f,\n", singleTps > 0 ? aggregateTps / singleTps : 0.0);
    std::printf("  \"mean_per_request_decode_tps\": %.2f,\n", meanPerRequest);
    std::printf("  \"steady_pool_round_trips_per_step\": %.1f,\n", steadyRoundTripsPerStep);
    if (!split.empty()) std::printf("  \"steady_step_split\": %s,\n", split.c_str());
    if (!skipPrefix) {
        std::printf("  \"system_prompt_tokens\": %d,\n", sysTokens);
        std::printf("  \"ttft_first_ms\": %.1f,\n", ttftFirst);
        std::printf("  \"ttft_second_shared_prefix_ms\": %.1f,\n", ttftShared);
        std::printf("  \"second_cached_prompt_tokens\": %d,\n", cachedShared);
        std::printf("  \"ttft_second_cache_flushed_ms\": %.1f,\n", ttftUnshared);
        std::printf("  \"ttft_shared_over_first\": %.4f,\n", ttftFirst > 0 ? ttftShared / ttftFirst : 0.0);
    }
    if (loadRequests > 0) {
        std::printf("  \"load_requests\": %d,\n  \"load_long_tokens\": %d,\n  \"load_short_tokens\": %d,\n",
                    loadRequests, loadLong, loadShort);
        std::printf("  \"load_ttft_p50_ms\": %.1f,\n  \"load_ttft_p90_ms\": %.1f,\n  \"load_ttft_p99_ms\": %.1f,\n",
                    percentile(load.ttft, 0.5), percentile(load.ttft, 0.9), percentile(load.ttft, 0.99));
        std::printf("  \"load_short_ttft_p50_ms\": %.1f,\n  \"load_short_ttft_p90_ms\": %.1f,\n",
                    percentile(load.ttftShort, 0.5), percentile(load.ttftShort, 0.9));
        std::printf("  \"load_mean_running\": %.2f,\n  \"load_max_running\": %d,\n  \"load_seconds\": %.1f,\n",
                    load.meanRunning, load.maxRunning, load.seconds);
    }
    std::printf("  \"violations\": %llu\n}\n", (unsigned long long)st.violations);
    return 0;
}

weir::cli::Command reg{"bench-concurrency",
                       "continuous batching and prefix sharing as JSON: [-m FILE] --concurrency N [--gen-tokens N] "
                       "[--prompt-tokens N] [--system-prompt-tokens N] [--no-prefix] [--load-requests N] "
                       "[--load-long-tokens N] [--load-short-tokens N] [--load-gen-tokens N] [--step-split] and the engine flags",
                       &run};

} // namespace
