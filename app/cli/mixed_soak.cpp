// The mixed load, through the public Engine API only: client threads send
// requests shaped at and near the context limit; the tally afterwards checks
// each one's ending against what the context allows.
#include "app/cli/mixed_soak.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "app/cli/soak.h"
#include "weir/base/json_string.h"
#include "weir/engine.h"
#include "weir/types/pool_sizing.h"

namespace weir::cli {
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

// When a request is cancelled: after `after` tokens from the sink, or at once
// from the client's thread (after == 0); a disconnect is after == 1.
struct CancelPlan {
    bool cancels = false;
    int32_t after = 0;
};

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t i = size_t(p * double(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

// Token material: one long deterministic text; shared prefixes start at
// different places in it, tails at random places.
struct Material {
    int32_t context = 0;
    std::vector<int32_t> stream;
    int32_t first = 0;  // every prompt's first token: the model's BOS, else the stream's first
    std::vector<std::vector<int32_t>> prefixes;
};

Material makeMaterial(const Engine& engine, const MixedSoakOptions& opt, int64_t fullPoolTokens) {
    Material m;
    // The scheduler's limit: the planned context, never past the full pool.
    const int64_t planned = kv::planPools(engine.options(), engine.modelConfig()).maxContext;
    m.context = int32_t(std::min<int64_t>(planned, fullPoolTokens));
    m.stream = engine.tokenize(makeSystemPrompt(engine, 2 * m.context + 64), false);
    const std::vector<int32_t> bos = engine.tokenize("", true);  // the model's BOS, if it adds one
    m.first = bos.empty() ? m.stream[0] : bos[0];
    std::mt19937_64 rng(opt.seed * 7919u + 1);
    for (int32_t i = 0; i < opt.sharedPrefixes; ++i) {
        const size_t len = size_t(m.context / 4 + int32_t(rng() % uint64_t(std::max(1, m.context / 2))));
        const size_t at = size_t(rng() % m.stream.size());
        std::vector<int32_t> p;
        for (size_t k = 0; k < len; ++k) p.push_back(m.stream[(at + k) % m.stream.size()]);
        m.prefixes.push_back(std::move(p));
    }
    return m;
}

// Samples how often requests run while clients are active.
class RunningSampler {
public:
    RunningSampler(const Engine& engine, const std::atomic<int32_t>& active) {
        thread_ = std::thread([this, &engine, &active] {
            while (sampling_.load()) {
                if (active.load() > 0) {
                    const CacheStatus st = engine.cacheStatus();
                    ++samples_;
                    runningSum_ += uint64_t(st.running);
                    maxRunning_ = std::max(maxRunning_, st.running);
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        });
    }
    // Ends the sampling thread and writes what it saw.
    void stop(MixedSoakReport& report) {
        sampling_.store(false);
        thread_.join();
        report.maxRunning = maxRunning_;
        report.meanRunning = samples_ ? double(runningSum_) / double(samples_) : 0.0;
    }

private:
    std::atomic<bool> sampling_{true};
    uint64_t samples_ = 0, runningSum_ = 0;  // the sampling thread's until stop() joins it
    int32_t maxRunning_ = 0;
    std::thread thread_;
};

// The clients of one run: each thread runs client() until the request
// budget or the time is spent.
class MixedRun {
public:
    MixedRun(Engine& engine, const MixedSoakOptions& opt, const Material& material)
        : engine_(engine), opt_(opt), m_(material), start_(Clock::now()) {}

    void client(int32_t index) {
        std::mt19937_64 rng(opt_.seed * 1000003u + uint64_t(index));
        for (;;) {
            if (timeUp()) break;
            if (next_.fetch_add(1) >= opt_.requests) break;
            Sent p;
            GenerateRequest req = shapeRequest(rng, p);
            req.tag = ClientTag{0, uint64_t(index)};
            const CancelPlan cancel = planCancel(rng, p.maxTokens);
            p.cancels = cancel.cancels;
            ++active_;
            sendAndWait(std::move(req), cancel, p);
            --active_;
            recordFinished(p);
            if (p.hung) break;  // this client's request never ended: stop it, report below
            bool busy = false;
            {
                std::lock_guard<std::mutex> lock(p.outcome->mutex);
                const Event& end = p.outcome->terminal;
                busy = end.kind == Event::Kind::Error && end.error == ErrorCode::QueueFull;
            }
            // Like an HTTP client after a 503 with Retry-After.
            if (busy) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }

    const std::atomic<int32_t>& active() const { return active_; }
    const std::vector<Sent>& finished() const { return finished_; }

private:
    bool timeUp() const {
        return opt_.durationSeconds > 0 &&
               std::chrono::duration<double>(Clock::now() - start_).count() >= opt_.durationSeconds;
    }

    // A prompt past the context, near it or anywhere below it, often starting
    // with a shared prefix; max_tokens uniform in [1, maxTokens].
    GenerateRequest shapeRequest(std::mt19937_64& rng, Sent& p) const {
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        const int32_t context = m_.context;
        const double kind = unit(rng);
        if (kind < opt_.tooLongFraction)
            p.promptTokens = context + 1 + int32_t(rng() % 8);
        else if (kind < opt_.tooLongFraction + opt_.nearLimitFraction)
            p.promptTokens = std::max(2, context - int32_t(rng() % uint64_t(opt_.nearLimitTokens + 1)));
        else
            p.promptTokens = 2 + int32_t(rng() % uint64_t(std::max(1, context - 1)));
        p.maxTokens = 1 + int32_t(rng() % uint64_t(std::max(1, opt_.maxTokens)));

        GenerateRequest req;
        req.prompt.push_back(m_.first);
        if (!m_.prefixes.empty() && unit(rng) < opt_.sharedFraction) {
            const auto& prefix = m_.prefixes[rng() % m_.prefixes.size()];
            for (size_t k = 0; k < prefix.size() && int32_t(req.prompt.size()) < p.promptTokens; ++k)
                req.prompt.push_back(prefix[k]);
        }
        const auto& stream = m_.stream;
        for (size_t at = size_t(rng() % stream.size()); int32_t(req.prompt.size()) < p.promptTokens; ++at)
            req.prompt.push_back(stream[at % stream.size()]);
        req.maxTokens = p.maxTokens;
        req.sampling.seed = rng();
        req.stopAtEndOfGeneration = false;  // runs to max_tokens or the context: lengths are exact
        return req;
    }

    // Cancel after k tokens (k = 0: at once), or on the first token like a
    // client that disconnects.
    CancelPlan planCancel(std::mt19937_64& rng, int32_t maxTokens) const {
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        const double c = unit(rng);
        const bool disconnect = c < opt_.disconnectFraction;
        const bool cancel = !disconnect && c < opt_.disconnectFraction + opt_.cancelFraction;
        const int32_t after = disconnect ? 1 : int32_t(rng() % uint64_t(maxTokens + 1));
        return {disconnect || cancel, after};
    }

    // Submits, cancels as planned, and waits up to hangSeconds for the end.
    void sendAndWait(GenerateRequest req, const CancelPlan& cancel, Sent& p) {
        p.outcome = std::make_shared<Outcome>();
        auto out = p.outcome;
        Engine* eng = &engine_;
        const bool cancelInSink = cancel.cancels && cancel.after > 0;
        const int32_t cancelAfter = cancel.after;
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
        const uint64_t id = engine_.submit(std::move(req), sink);
        if (cancel.cancels && !cancelInSink) engine_.cancel(id);
        std::unique_lock<std::mutex> lock(out->mutex);
        const auto limit = std::chrono::duration<double>(opt_.hangSeconds);
        p.hung = !out->cv.wait_for(lock, limit, [&] { return out->terminals > 0; });
    }

    void recordFinished(const Sent& p) {
        size_t count = 0;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            finished_.push_back(p);
            count = finished_.size();
        }
        if (!opt_.progress || opt_.progressEvery <= 0 || count % size_t(opt_.progressEvery) != 0) return;
        const CacheStatus st = engine_.cacheStatus();
        std::ostringstream line;
        line << count << " requests in " << int(std::chrono::duration<double>(Clock::now() - start_).count())
             << " s; running " << st.running << ", waiting " << st.waiting << ", preemptions " << st.preemptions
             << ", violations " << st.violations;
        opt_.progress(line.str());
    }

    Engine& engine_;
    const MixedSoakOptions& opt_;
    const Material& m_;
    const Clock::time_point start_;
    std::atomic<int32_t> next_{0};
    std::atomic<int32_t> active_{0};
    std::mutex mutex_;  // guards finished_ while the clients run
    std::vector<Sent> finished_;
};

void note(MixedSoakReport& report, const std::string& what) {
    if (report.details.size() < 16) report.details.push_back(what);
}

// One request's ending, checked against what the context allows.
void tallyOne(MixedSoakReport& report, const Sent& p, int32_t context, std::vector<double>& ttft) {
    ++report.requests;
    if (p.hung) {
        ++report.hung;
        note(report, "hung: prompt " + std::to_string(p.promptTokens) + ", max_tokens " + std::to_string(p.maxTokens));
        return;
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
            note(report, "wrong length: " + shape + ", expected " + std::to_string(expected));
        }
        if (p.maxTokens > context + 1 - p.promptTokens) ++report.doneAtContext;
        if (o.terminal.usage.timeToFirstTokenMs > 0) ttft.push_back(o.terminal.usage.timeToFirstTokenMs);
        break;
    }
    case Event::Kind::Cancelled:
        ++report.cancelled;
        if (!p.cancels) note(report, "cancelled without a cancel: " + shape);
        break;
    case Event::Kind::Error:
        ++report.errors;
        if (p.promptTokens > context && o.terminal.error == ErrorCode::TooLong) {
            ++report.refusedTooLong;
        } else if (o.terminal.error == ErrorCode::QueueFull) {
            ++report.queueFull;  // back-pressure (HTTP 503), not a refusal of the request
        } else {
            ++report.wrongRefusals;
            note(report, "wrong refusal: " + shape + ": " + o.terminal.text);
        }
        break;
    default: break;
    }
}

void tally(MixedSoakReport& report, const std::vector<Sent>& finished, int32_t context) {
    std::vector<double> ttft;
    for (const Sent& p : finished) tallyOne(report, p, context, ttft);
    report.ttftP50Ms = percentile(ttft, 0.50);
    report.ttftP90Ms = percentile(ttft, 0.90);
    report.ttftP99Ms = percentile(ttft, 0.99);
}

// Nothing may be left once every client is gone and the cache is flushed
// (unless a request hung: its pages are still held).
void checkPools(MixedSoakReport& report, Engine& engine, const CacheStatus& before) {
    if (report.hung == 0) {
        const MaintenanceResult cleared = engine.clearPrefixCache();
        if (!cleared.ok()) note(report, "clearing the prefix cache: " + cleared.message);
    }
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
    for (const auto& v : after.violationDetails) note(report, "violation: " + v);
}

} // namespace

MixedSoakReport runMixedSoak(Engine& engine, const MixedSoakOptions& opt) {
    MixedSoakReport report;
    const auto start = Clock::now();
    const CacheStatus before = engine.cacheStatus();
    const Material material = makeMaterial(engine, opt, before.full.capacityTokens);
    report.context = material.context;

    MixedRun run(engine, opt, material);
    RunningSampler sampler(engine, run.active());
    std::vector<std::thread> clients;
    for (int32_t i = 0; i < opt.clients; ++i) clients.emplace_back([&run, i] { run.client(i); });
    for (auto& t : clients) t.join();
    sampler.stop(report);

    tally(report, run.finished(), material.context);
    checkPools(report, engine, before);
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

} // namespace weir::cli
