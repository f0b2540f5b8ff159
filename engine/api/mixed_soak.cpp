#include "weir/mixed_soak.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "engine/api/engine_access.h"
#include "engine/tokenizer/tokenizer.h"
#include "weir/base/json_string.h"
#include "weir/engine.h"
#include "weir/soak.h"
#include "weir/types/pool_sizing.h"

namespace weir {
namespace {

using Clock = std::chrono::steady_clock;

// What one request saw; shared with its sink, which may outlive the wait.
struct Outcome {
    std::mutex mutex;
    std::condition_variable cv;
    int32_t tokens = 0;
    int32_t terminals = 0;
    int32_t eventsAfterTerminal = 0;
    Event terminal;
};

struct Sent {
    int32_t promptTokens = 0;
    int32_t maxTokens = 0;
    bool cancels = false;
    std::shared_ptr<Outcome> outcome;
    bool hung = false;
};

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t i = size_t(p * double(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

} // namespace

MixedSoakReport runMixedSoak(Engine& engine, const MixedSoakOptions& opt) {
    MixedSoakReport report;
    const auto start = Clock::now();
    const CacheStatus before = engine.cacheStatus();
    // The scheduler's limit: the planned context, never past the full pool.
    const int64_t planned = kv::planPools(engine.options(), engine.modelConfig()).maxContext;
    const int32_t context = int32_t(std::min<int64_t>(planned, before.full.capacityTokens));
    report.context = context;

    // Token material: one long deterministic text; shared prefixes start at
    // different places in it, tails at random places.
    const std::vector<int32_t> stream = engine.tokenize(makeSystemPrompt(engine, 2 * context + 64), false);
    const int32_t bos = EngineAccess::tokenizer(engine).bos();
    std::vector<std::vector<int32_t>> prefixes;
    {
        std::mt19937_64 rng(opt.seed * 7919u + 1);
        for (int32_t i = 0; i < opt.sharedPrefixes; ++i) {
            const size_t len = size_t(context / 4 + int32_t(rng() % uint64_t(std::max(1, context / 2))));
            const size_t at = size_t(rng() % stream.size());
            std::vector<int32_t> p;
            for (size_t k = 0; k < len; ++k) p.push_back(stream[(at + k) % stream.size()]);
            prefixes.push_back(std::move(p));
        }
    }

    std::atomic<int32_t> next{0};
    std::atomic<int32_t> active{0};
    std::mutex doneMutex;
    std::vector<Sent> finished;

    auto timeUp = [&] {
        return opt.durationSeconds > 0 &&
               std::chrono::duration<double>(Clock::now() - start).count() >= opt.durationSeconds;
    };

    auto client = [&](int32_t index) {
        std::mt19937_64 rng(opt.seed * 1000003u + uint64_t(index));
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        for (;;) {
            if (timeUp()) break;
            const int32_t n = next.fetch_add(1);
            if (n >= opt.requests) break;
            Sent p;
            const double kind = unit(rng);
            if (kind < opt.tooLongFraction)
                p.promptTokens = context + 1 + int32_t(rng() % 8);
            else if (kind < opt.tooLongFraction + opt.nearLimitFraction)
                p.promptTokens = std::max(2, context - int32_t(rng() % uint64_t(opt.nearLimitTokens + 1)));
            else
                p.promptTokens = 2 + int32_t(rng() % uint64_t(std::max(1, context - 1)));
            p.maxTokens = 1 + int32_t(rng() % uint64_t(std::max(1, opt.maxTokens)));

            GenerateRequest req;
            req.prompt.push_back(bos >= 0 ? bos : stream[0]);
            if (!prefixes.empty() && unit(rng) < opt.sharedFraction) {
                const auto& prefix = prefixes[rng() % prefixes.size()];
                for (size_t k = 0; k < prefix.size() && int32_t(req.prompt.size()) < p.promptTokens; ++k)
                    req.prompt.push_back(prefix[k]);
            }
            for (size_t at = size_t(rng() % stream.size()); int32_t(req.prompt.size()) < p.promptTokens; ++at)
                req.prompt.push_back(stream[at % stream.size()]);
            req.maxTokens = p.maxTokens;
            req.sampling.seed = rng();
            req.stopAtEndOfGeneration = false;  // runs to max_tokens or the context: lengths are exact
            req.tag = ClientTag{0, uint64_t(index)};

            // Cancel after k tokens (k = 0: at once, from this thread), or on
            // the first token like a client that disconnects.
            const double c = unit(rng);
            const bool disconnect = c < opt.disconnectFraction;
            const bool cancel = !disconnect && c < opt.disconnectFraction + opt.cancelFraction;
            const int32_t cancelAfter = disconnect ? 1 : int32_t(rng() % uint64_t(p.maxTokens + 1));
            p.cancels = disconnect || cancel;
            p.outcome = std::make_shared<Outcome>();
            auto out = p.outcome;
            Engine* eng = &engine;
            const bool cancelInSink = p.cancels && cancelAfter > 0;
            auto sink = [out, eng, cancelInSink, cancelAfter](const Event& ev) {
                std::lock_guard<std::mutex> lock(out->mutex);
                if (out->terminals > 0) ++out->eventsAfterTerminal;
                if (ev.kind == Event::Kind::Token) {
                    if (++out->tokens == cancelAfter && cancelInSink) eng->cancel(ev.request);
                    return;
                }
                ++out->terminals;
                out->terminal = ev;
                out->cv.notify_all();
            };
            ++active;
            const uint64_t id = engine.submit(std::move(req), sink);
            if (p.cancels && !cancelInSink) engine.cancel(id);
            {
                std::unique_lock<std::mutex> lock(out->mutex);
                const auto limit = std::chrono::duration<double>(opt.hangSeconds);
                p.hung = !out->cv.wait_for(lock, limit, [&] { return out->terminals > 0; });
            }
            --active;
            size_t count = 0;
            {
                std::lock_guard<std::mutex> lock(doneMutex);
                finished.push_back(p);
                count = finished.size();
            }
            if (opt.progress && opt.progressEvery > 0 && count % size_t(opt.progressEvery) == 0) {
                const CacheStatus st = engine.cacheStatus();
                std::ostringstream line;
                line << count << " requests in " << int(std::chrono::duration<double>(Clock::now() - start).count())
                     << " s; running " << st.running << ", waiting " << st.waiting << ", preemptions "
                     << st.preemptions << ", violations " << st.violations;
                opt.progress(line.str());
            }
            if (p.hung) break;  // this client's request never ended: stop it, report below
            bool busy = false;
            {
                std::lock_guard<std::mutex> lock(out->mutex);
                busy = out->terminal.kind == Event::Kind::Error && out->terminal.error == ErrorCode::QueueFull;
            }
            // Like an HTTP client after a 503 with Retry-After.
            if (busy) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    };

    std::atomic<bool> sampling{true};
    uint64_t samples = 0, runningSum = 0;
    std::thread sampler([&] {
        while (sampling.load()) {
            if (active.load() > 0) {
                const CacheStatus st = engine.cacheStatus();
                ++samples;
                runningSum += uint64_t(st.running);
                report.maxRunning = std::max(report.maxRunning, st.running);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    });
    std::vector<std::thread> clients;
    for (int32_t i = 0; i < opt.clients; ++i) clients.emplace_back(client, i);
    for (auto& t : clients) t.join();
    sampling.store(false);
    sampler.join();
    report.meanRunning = samples ? double(runningSum) / double(samples) : 0.0;

    std::vector<double> ttft;
    auto note = [&](const std::string& what) {
        if (report.details.size() < 16) report.details.push_back(what);
    };
    for (const Sent& p : finished) {
        ++report.requests;
        if (p.hung) {
            ++report.hung;
            note("hung: prompt " + std::to_string(p.promptTokens) + ", max_tokens " + std::to_string(p.maxTokens));
            continue;
        }
        std::lock_guard<std::mutex> lock(p.outcome->mutex);
        const Outcome& o = *p.outcome;
        if (o.terminals != 1 || o.eventsAfterTerminal != 0) ++report.badTerminations;
        const std::string shape = "prompt " + std::to_string(p.promptTokens) + ", max_tokens " +
                                  std::to_string(p.maxTokens) + ", " + std::to_string(o.tokens) + " tokens";
        report.promptTokens += uint64_t(o.terminal.usage.promptTokens);
        report.cachedPromptTokens += uint64_t(o.terminal.usage.cachedPromptTokens);
        report.completionTokens += uint64_t(o.tokens);
        switch (o.terminal.kind) {
        case Event::Kind::Done: {
            ++report.done;
            const int32_t expected = std::min(p.maxTokens, context + 1 - p.promptTokens);
            if (o.tokens != expected || o.terminal.finish != FinishReason::Length) {
                ++report.wrongLengths;
                note("wrong length: " + shape + ", expected " + std::to_string(expected));
            }
            if (p.maxTokens > context + 1 - p.promptTokens) ++report.doneAtContext;
            if (o.terminal.usage.timeToFirstTokenMs > 0) ttft.push_back(o.terminal.usage.timeToFirstTokenMs);
            break;
        }
        case Event::Kind::Cancelled:
            ++report.cancelled;
            if (!p.cancels) note("cancelled without a cancel: " + shape);
            break;
        case Event::Kind::Error:
            ++report.errors;
            if (p.promptTokens > context && o.terminal.error == ErrorCode::TooLong) {
                ++report.refusedTooLong;
            } else if (o.terminal.error == ErrorCode::QueueFull) {
                ++report.queueFull;  // back-pressure (HTTP 503), not a refusal of the request
            } else {
                ++report.wrongRefusals;
                note("wrong refusal: " + shape + ": " + o.terminal.text);
            }
            break;
        default: break;
        }
    }
    report.ttftP50Ms = percentile(ttft, 0.50);
    report.ttftP90Ms = percentile(ttft, 0.90);
    report.ttftP99Ms = percentile(ttft, 0.99);

    // Nothing may be left once every client is gone and the cache is flushed.
    if (report.hung == 0) engine.clearPrefixCache();
    const CacheStatus after = engine.cacheStatus();
    const int64_t page = std::max<int32_t>(engine.options().pageSize, 1);
    if (report.hung == 0) {
        report.leakedFullPages = (after.full.capacityTokens - after.full.freeTokens) / page;
        report.leakedWindowPages = (after.window.capacityTokens - after.window.freeTokens) / page;
    }
    report.preemptions = after.preemptions - before.preemptions;
    report.deferrals = after.deferrals - before.deferrals;
    report.integrityChecks = after.integrityChecks - before.integrityChecks;
    report.violations = after.violations - before.violations;
    for (const auto& v : after.violationDetails) note("violation: " + v);
    report.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    return report;
}

std::string MixedSoakReport::toJson() const {
    std::ostringstream o;
    o << "{\n"
      << "  \"mode\": \"mixed\",\n"
      << "  \"context\": " << context << ",\n"
      << "  \"requests\": " << requests << ",\n"
      << "  \"done\": " << done << ",\n"
      << "  \"done_stopped_by_context\": " << doneAtContext << ",\n"
      << "  \"cancelled\": " << cancelled << ",\n"
      << "  \"errors\": " << errors << ",\n"
      << "  \"refused_too_long\": " << refusedTooLong << ",\n"
      << "  \"queue_full\": " << queueFull << ",\n"
      << "  \"wrong_refusals\": " << wrongRefusals << ",\n"
      << "  \"wrong_lengths\": " << wrongLengths << ",\n"
      << "  \"hung\": " << hung << ",\n"
      << "  \"bad_terminations\": " << badTerminations << ",\n"
      << "  \"violations\": " << violations << ",\n"
      << "  \"leaked_full_pages\": " << leakedFullPages << ",\n"
      << "  \"leaked_window_pages\": " << leakedWindowPages << ",\n"
      << "  \"preemptions\": " << preemptions << ",\n"
      << "  \"deferrals\": " << deferrals << ",\n"
      << "  \"integrity_checks\": " << integrityChecks << ",\n"
      << "  \"ttft_p50_ms\": " << ttftP50Ms << ",\n"
      << "  \"ttft_p90_ms\": " << ttftP90Ms << ",\n"
      << "  \"ttft_p99_ms\": " << ttftP99Ms << ",\n"
      << "  \"mean_running\": " << meanRunning << ",\n"
      << "  \"max_running\": " << maxRunning << ",\n"
      << "  \"prompt_tokens\": " << promptTokens << ",\n"
      << "  \"cached_prompt_tokens\": " << cachedPromptTokens << ",\n"
      << "  \"completion_tokens\": " << completionTokens << ",\n"
      << "  \"wall_seconds\": " << wallSeconds << ",\n"
      << "  \"details\": [";
    for (size_t i = 0; i < details.size(); ++i) o << (i ? ", " : "") << jsonString(details[i]);
    o << "]\n}\n";
    return o.str();
}

} // namespace weir
