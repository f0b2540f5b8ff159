// weir-cli bench-concurrency: what continuous batching and prefix sharing buy.
//   1. decode speed of one conversation alone;
//   2. aggregate decode speed of N conversations at once (steady state: from
//      the moment all N are decoding until the first one finishes);
//   3. time to first token of a conversation with a long system prompt, then of
//      a second conversation sharing that prompt (prefix cache), and of the
//      second again with the cache flushed.
// Prints JSON.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "weir/engine.h"
#include "weir/soak.h"
#include "weir/base/error.h"
#include "weir/types/engine_limits.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Run {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<Clock::time_point> tokenTimes;
    bool done = false;
    weir::Event terminal;

    weir::EventSink sink() {
        return [this](const weir::Event& ev) {
            std::lock_guard<std::mutex> lock(mutex);
            if (ev.kind == weir::Event::Kind::Token) {
                tokenTimes.push_back(Clock::now());
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
    args.rejectUnknown();

    weir::Engine engine(eo);

    // 1. One conversation alone.
    Run single;
    engine.submit(makeRequest(userPrompt(engine, 0, promptTokens), genTokens), single.sink());
    single.wait();
    const double singleTps = single.terminal.usage.decodeTokensPerSecond;

    // 2. N at once.
    std::vector<std::unique_ptr<Run>> runs;
    for (int i = 0; i < n; ++i) runs.push_back(std::make_unique<Run>());
    for (int i = 0; i < n; ++i)
        engine.submit(makeRequest(userPrompt(engine, i + 1, promptTokens), genTokens), runs[size_t(i)]->sink());
    for (auto& r : runs) r->wait();
    Clock::time_point allDecoding = Clock::time_point::min(), firstFinished = Clock::time_point::max();
    for (auto& r : runs) {
        allDecoding = std::max(allDecoding, r->tokenTimes.front());
        firstFinished = std::min(firstFinished, r->tokenTimes.back());
    }
    int64_t steadyTokens = 0;
    for (auto& r : runs)
        for (auto t : r->tokenTimes) steadyTokens += (t > allDecoding && t <= firstFinished) ? 1 : 0;
    const double steadySeconds = std::chrono::duration<double>(firstFinished - allDecoding).count();
    const double aggregateTps = steadySeconds > 0 ? double(steadyTokens) / steadySeconds : 0.0;
    double meanPerRequest = 0;
    for (auto& r : runs) meanPerRequest += r->terminal.usage.decodeTokensPerSecond / n;

    // 3. Time to first token with and without a shared system prompt.
    double ttftFirst = 0, ttftShared = 0, ttftUnshared = 0;
    int32_t cachedShared = 0, sysTokens = 0;
    if (!skipPrefix) {
        engine.clearPrefixCache();
        const std::string system = weir::makeSystemPrompt(engine, systemTokens);
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

    const weir::CacheStatus st = engine.cacheStatus();
    std::printf("{\n");
    std::printf("  \"model\": \"%s\",\n", engine.modelConfig().name.c_str());
    std::printf("  \"threads\": %d,\n", eo.threads);
    std::printf("  \"concurrency\": %d,\n", n);
    std::printf("  \"prompt_tokens\": %d,\n  \"gen_tokens\": %d,\n", promptTokens, genTokens);
    std::printf("  \"single_decode_tps\": %.2f,\n", singleTps);
    std::printf("  \"aggregate_decode_tps\": %.2f,\n", aggregateTps);
    std::printf("  \"aggregate_over_single\": %.2f,\n", singleTps > 0 ? aggregateTps / singleTps : 0.0);
    std::printf("  \"mean_per_request_decode_tps\": %.2f,\n", meanPerRequest);
    if (!skipPrefix) {
        std::printf("  \"system_prompt_tokens\": %d,\n", sysTokens);
        std::printf("  \"ttft_first_ms\": %.1f,\n", ttftFirst);
        std::printf("  \"ttft_second_shared_prefix_ms\": %.1f,\n", ttftShared);
        std::printf("  \"second_cached_prompt_tokens\": %d,\n", cachedShared);
        std::printf("  \"ttft_second_cache_flushed_ms\": %.1f,\n", ttftUnshared);
        std::printf("  \"ttft_shared_over_first\": %.4f,\n", ttftFirst > 0 ? ttftShared / ttftFirst : 0.0);
    }
    std::printf("  \"violations\": %llu\n}\n", (unsigned long long)st.violations);
    return 0;
}

weir::cli::Command reg{"bench-concurrency",
                       "continuous batching and prefix sharing as JSON: [-m FILE] --concurrency N [--gen-tokens N] "
                       "[--prompt-tokens N] [--system-prompt-tokens N] [--no-prefix] and the engine flags",
                       &run};

} // namespace
