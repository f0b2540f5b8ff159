#include "app/cli/soak.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "weir/base/json_string.h"
#include "weir/engine.h"

namespace weir::cli {
namespace {

// What one request saw; shared with its sink, which may outlive the wait.
struct Outcome {
    std::mutex mutex;
    std::condition_variable cv;
    std::string text;
    int32_t tokens = 0;
    int32_t terminals = 0;
    int32_t eventsAfterTerminal = 0;
    Event::Kind kind = Event::Kind::Token;
    std::string error;
    Usage usage;
};

const char* kWords[] = {
    "the", "operator", "shall", "record", "every", "change", "to", "a", "ledger", "before",
    "approval", "of", "budget", "requests", "is", "given", "within", "three", "working", "days",
    "and", "any", "exception", "must", "be", "reported", "with", "its", "reason", "reviewer",
    "signs", "each", "entry", "policy", "applies", "across", "all", "regions", "when", "teams",
    "migrate", "services", "between", "clusters", "backups", "are", "verified", "weekly", "by",
    "restoring", "one", "sample", "into", "an", "isolated", "environment", "tools", "may", "call",
    "external", "systems", "only", "through", "audited", "gateways", "responses", "stay", "brief"};

std::string paragraph(std::mt19937_64& rng, int index) {
    std::ostringstream out;
    out << "Clause " << index << ". ";
    const int n = 60 + int(rng() % 40);
    for (int i = 0; i < n; ++i) {
        out << kWords[rng() % (sizeof(kWords) / sizeof(kWords[0]))];
        out << ((i % 13 == 12) ? ". " : " ");
    }
    out << "\n";
    return out.str();
}

} // namespace

std::string makeSystemPrompt(const Engine& engine, int32_t tokens) {
    std::mt19937_64 rng(0x5eed);
    std::string text = "You are a careful assistant for an operations team. Follow the policy below.\n";
    int64_t count = int64_t(engine.tokenize(text, false).size());
    for (int i = 1; count < tokens; ++i) {
        const std::string p = paragraph(rng, i);
        text += p;
        count += int64_t(engine.tokenize(p, false).size());
        // Pieces tokenize almost additively; settle the exact count near the end.
        if (count >= tokens) count = int64_t(engine.tokenize(text, false).size());
    }
    return text;
}

namespace {

using Clock = std::chrono::steady_clock;

// The next user turn of a conversation: a question about a clause, or (every
// toolEvery-th turn) a tool's result.
Message nextUserTurn(const SoakOptions& opt, std::mt19937_64& rng, int32_t convIndex, int32_t generation,
                     int32_t turn, int32_t index) {
    if (turn > 0 && opt.toolEvery > 0 && turn % opt.toolEvery == 0)
        return {"user", "```tool_output\n{\"call\": " + std::to_string(index) + ", \"status\": \"ok\", \"rows\": " +
                            std::to_string(rng() % 1000) + "}\n```", {}};
    return {"user", "Conversation " + std::to_string(convIndex) + "." + std::to_string(generation) + ", turn " +
                        std::to_string(turn) + ": what does clause " + std::to_string(1 + rng() % 60) + " require?", {}};
}

// The conversations of one soak run: each thread runs conversation(), which
// sends turns until the shared request budget is spent.
class SoakRun {
public:
    SoakRun(Engine& engine, const SoakOptions& opt, std::string system)
        : engine_(engine), opt_(opt), system_(std::move(system)), start_(Clock::now()) {}

    void conversation(int32_t convIndex) {
        std::mt19937_64 rng(opt_.seed * 1000003u + uint64_t(convIndex));
        std::vector<Message> messages;
        int32_t turn = 0, generation = 0;
        for (;;) {
            const int32_t index = nextRequest_.fetch_add(1);
            if (index >= opt_.requests) break;
            if (turn == 0) {
                messages = {{"system", system_, {}}};
                ++generation;
            }
            messages.push_back(nextUserTurn(opt_, rng, convIndex, generation, turn, index));
            const std::shared_ptr<Outcome> out = sendTurn(messages, rng, convIndex);
            recordFinished(out);
            messages.push_back({"assistant", out->text, {}});
            if (++turn >= opt_.turnsPerConversation) turn = 0;  // delete the conversation
        }
    }

    const std::vector<std::shared_ptr<Outcome>>& outcomes() const { return all_; }

private:
    // Sends the conversation so far and waits for its terminal event. Some
    // requests are cancelled: either from the sink (engine thread) after k
    // tokens, or from this thread after a short wait.
    std::shared_ptr<Outcome> sendTurn(const std::vector<Message>& messages, std::mt19937_64& rng, int32_t convIndex) {
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        GenerateRequest req;
        req.prompt = engine_.tokenizeChat(messages);
        req.maxTokens = opt_.maxTokens;
        req.sampling.seed = rng();
        req.tag = ClientTag{0, uint64_t(convIndex)};

        auto out = std::make_shared<Outcome>();
        const bool cancel = unit(rng) < opt_.cancelFraction;
        const bool cancelInSink = cancel && (rng() % 2 == 0);
        const int32_t cancelAfter = int32_t(rng() % uint64_t(opt_.maxTokens + 1));
        Engine* eng = &engine_;
        auto sink = [out, cancelInSink, cancelAfter, eng](const Event& ev) {
            std::lock_guard<std::mutex> lock(out->mutex);
            if (out->terminals > 0) ++out->eventsAfterTerminal;
            if (ev.kind == Event::Kind::Token) {
                out->text += ev.text;
                ++out->tokens;
                if (cancelInSink && out->tokens == cancelAfter) eng->cancel(ev.request);
                return;
            }
            ++out->terminals;
            out->kind = ev.kind;
            out->usage = ev.usage;
            if (ev.kind == Event::Kind::Error) out->error = ev.text;
            out->cv.notify_all();
        };
        const uint64_t id = engine_.submit(std::move(req), sink);
        std::unique_lock<std::mutex> lock(out->mutex);
        if (cancel && !cancelInSink) {
            out->cv.wait_for(lock, std::chrono::milliseconds(rng() % 50), [&] { return out->terminals > 0; });
            lock.unlock();
            engine_.cancel(id);
            lock.lock();
        }
        out->cv.wait(lock, [&] { return out->terminals > 0; });
        return out;
    }

    void recordFinished(const std::shared_ptr<Outcome>& out) {
        size_t finished = 0;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            all_.push_back(out);
            finished = all_.size();
        }
        if (opt_.progress && opt_.progressEvery > 0 && finished % size_t(opt_.progressEvery) == 0)
            opt_.progress(progressLine(finished));
    }

    std::string progressLine(size_t finished) const {
        const CacheStatus st = engine_.cacheStatus();
        const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
        std::ostringstream line;
        line << finished << "/" << opt_.requests << " requests in " << int(secs) << " s; preemptions "
             << st.preemptions << ", deferrals " << st.deferrals << ", integrity checks " << st.integrityChecks
             << ", violations " << st.violations << ", full free " << st.full.freeTokens << "/"
             << st.full.capacityTokens << ", window free " << st.window.freeTokens << "/" << st.window.capacityTokens;
        return line.str();
    }

    Engine& engine_;
    const SoakOptions& opt_;
    const std::string system_;
    const Clock::time_point start_;
    std::atomic<int32_t> nextRequest_{0};
    std::mutex mutex_;  // guards all_ while the conversations run
    std::vector<std::shared_ptr<Outcome>> all_;
};

// Counts what every request came to (the threads have all ended).
void tally(SoakReport& report, const std::vector<std::shared_ptr<Outcome>>& outcomes) {
    for (const auto& o : outcomes) {
        std::lock_guard<std::mutex> lock(o->mutex);
        ++report.requests;
        if (o->terminals != 1 || o->eventsAfterTerminal != 0) ++report.badTerminations;
        switch (o->kind) {
        case Event::Kind::Done: ++report.done; break;
        case Event::Kind::Cancelled: ++report.cancelled; break;
        case Event::Kind::Error:
            ++report.failed;
            if (report.errors.size() < 8) report.errors.push_back(o->error);
            break;
        default: break;
        }
        report.promptTokens += uint64_t(o->usage.promptTokens);
        report.cachedPromptTokens += uint64_t(o->usage.cachedPromptTokens);
        report.completionTokens += uint64_t(o->usage.completionTokens);
    }
}

// What the pools and the scheduler's counters say between `before` and `after`.
void comparePools(SoakReport& report, const CacheStatus& before, const CacheStatus& after, int32_t page) {
    report.refused = after.refusals - before.refusals;
    report.preemptions = after.preemptions - before.preemptions;
    report.deferrals = after.deferrals - before.deferrals;
    report.integrityChecks = after.integrityChecks - before.integrityChecks;
    report.violations = after.violations - before.violations;
    for (const auto& v : after.violationDetails)
        if (report.errors.size() < 16) report.errors.push_back("violation: " + v);
    report.leakedFullPages = (before.full.freeTokens - after.full.freeTokens) / page;
    report.leakedWindowPages = (before.window.freeTokens - after.window.freeTokens) / page;
}

} // namespace

SoakReport runSoak(Engine& engine, const SoakOptions& opt) {
    SoakReport report;
    const auto start = Clock::now();
    const CacheStatus before = engine.cacheStatus();

    std::string system = makeSystemPrompt(engine, opt.systemPromptTokens);
    report.systemPromptTokens = int32_t(engine.tokenize(system, false).size());
    SoakRun run(engine, opt, std::move(system));
    std::vector<std::thread> threads;
    for (int32_t c = 0; c < opt.conversations; ++c) threads.emplace_back([&run, c] { run.conversation(c); });
    for (auto& t : threads) t.join();

    // Every conversation is gone: flush the prefix cache; every page must be free again.
    const MaintenanceResult cleared = engine.clearPrefixCache();
    if (!cleared.ok()) report.errors.push_back("clearing the prefix cache: " + cleared.message);
    const CacheStatus after = engine.cacheStatus();
    report.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    tally(report, run.outcomes());
    comparePools(report, before, after, engine.options().pageSize);
    return report;
}

std::string SoakReport::toJson() const {
    std::ostringstream o;
    o << "{\n"
      << "  \"requests\": " << requests << ",\n"
      << "  \"done\": " << done << ",\n"
      << "  \"failed\": " << failed << ",\n"
      << "  \"refused\": " << refused << ",\n"
      << "  \"cancelled\": " << cancelled << ",\n"
      << "  \"bad_terminations\": " << badTerminations << ",\n"
      << "  \"preemptions\": " << preemptions << ",\n"
      << "  \"deferrals\": " << deferrals << ",\n"
      << "  \"integrity_checks\": " << integrityChecks << ",\n"
      << "  \"violations\": " << violations << ",\n"
      << "  \"leaked_full_pages\": " << leakedFullPages << ",\n"
      << "  \"leaked_window_pages\": " << leakedWindowPages << ",\n"
      << "  \"system_prompt_tokens\": " << systemPromptTokens << ",\n"
      << "  \"prompt_tokens\": " << promptTokens << ",\n"
      << "  \"cached_prompt_tokens\": " << cachedPromptTokens << ",\n"
      << "  \"completion_tokens\": " << completionTokens << ",\n"
      << "  \"wall_seconds\": " << wallSeconds << ",\n"
      << "  \"errors\": [";
    for (size_t i = 0; i < errors.size(); ++i)
        o << (i ? ", " : "") << jsonString(errors[i]);
    o << "]\n}\n";
    return o.str();
}

} // namespace weir::cli
