#include "app/cli/speculative_bench.h"

#include <condition_variable>
#include <mutex>
#include <vector>

#include "app/cli/cli_json.h"
#include "weir/base/error.h"
#include "weir/engine.h"

namespace weir::cli {
namespace {

// A code edit: the model writes the function again with one change, so most
// of its reply is already in the prompt.
const char* kQuoting =
    "Here is a Python function.\n\n"
    "def summarize(orders):\n"
    "    total = 0\n"
    "    count = 0\n"
    "    for order in orders:\n"
    "        if order.status == \"paid\":\n"
    "            total += order.amount\n"
    "            count += 1\n"
    "    average = total / count if count else 0\n"
    "    return {\"total\": total, \"count\": count, \"average\": average}\n\n"
    "Repeat this code with one change: the variable total is renamed to revenue.\n\n"
    "def summarize(orders):\n";
// Prose that does not quote anything.
const char* kPlain = "Write a short story about a lighthouse keeper who finds a message in a bottle.\n\n";

struct Reply {
    std::vector<int32_t> tokens;
    Usage usage;
    bool ok = false;
    std::string error;
};

// Greedy, or sampled (temperature 0.8, top-k 40, top-p 0.95, seed 7): a
// small base model decoding greedily soon repeats itself, which is a quote
// too; sampled prose is the case where drafts are mostly wrong.
Reply generate(Engine& engine, const std::vector<int32_t>& prompt, int32_t tokens, bool sampled) {
    GenerateRequest r;
    r.prompt = prompt;
    r.maxTokens = tokens;
    r.stopAtEndOfGeneration = false;  // every run decodes the same number of tokens
    r.sampling.temperature = sampled ? 0.8f : 0.0f;
    r.sampling.seed = 7;
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    Reply out;
    engine.submit(std::move(r), [&](const Event& ev) {
        std::lock_guard<std::mutex> lock(mutex);
        if (ev.kind == Event::Kind::Token) {
            out.tokens.push_back(ev.token);
            return;
        }
        out.usage = ev.usage;
        out.ok = ev.kind == Event::Kind::Done;
        out.error = ev.text;
        done = true;
        cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return done; });
    if (!out.ok) throw Error("speculative bench: the reply failed: " + out.error);
    return out;
}

std::string runJson(const Reply& r) {
    const double rate = r.usage.draftTokens > 0 ? double(r.usage.acceptedDraftTokens) / r.usage.draftTokens : 0.0;
    return "{\"decode_tokens_per_s\":" + jsonNumber(r.usage.decodeTokensPerSecond) +
           ",\"draft_tokens\":" + std::to_string(r.usage.draftTokens) +
           ",\"accepted_draft_tokens\":" + std::to_string(r.usage.acceptedDraftTokens) +
           ",\"acceptance_rate\":" + jsonNumber(rate) + "}";
}

} // namespace

std::string runSpeculativeBench(const std::string& modelPath, int32_t threads, int32_t tokens, int32_t reps,
                                SpeculativeBench mode) {
    EngineOptions o;
    o.modelPath = modelPath;
    o.threads = threads;
    o.maxRunningRequests = 1;
    o.maxContext = 1024;
    std::unique_ptr<Engine> off, on;
    if (mode != SpeculativeBench::On) {
        o.speculative = false;
        off = std::make_unique<Engine>(o);
    }
    if (mode != SpeculativeBench::Off) {
        o.speculative = true;
        on = std::make_unique<Engine>(o);
    }
    Engine& any = on ? *on : *off;
    std::string json = "{\"tokens\":" + std::to_string(tokens) + ",\"reps\":" + std::to_string(reps) + ",\"draft_tokens_max\":" +
                       std::to_string(any.options().draftTokens) + ",\"ngram\":[" +
                       std::to_string(any.options().draftNgramMax) + "," + std::to_string(any.options().draftNgramMin) + "]";
    struct Case {
        const char* name;
        const char* text;
        bool sampled;
    };
    for (const Case& c : {Case{"quoting", kQuoting, false}, Case{"plain", kPlain, false},
                          Case{"plain_sampled", kPlain, true}}) {
        const char* name = c.name;
        const char* text = c.text;
        const std::vector<int32_t> prompt = any.tokenize(text, true);
        if (int64_t(prompt.size()) + tokens > o.maxContext)
            throw Error("--spec-tg " + std::to_string(tokens) + " is too long for the bench's context of " +
                        std::to_string(o.maxContext));
        json += ",\"" + std::string(name) + "\":{\"sampling\":\"" + (c.sampled ? "temperature 0.8, seed 7" : "greedy") +
                "\",\"prompt_tokens\":" + std::to_string(prompt.size());
        // Warm-up (first touches of the weights and pools), then off and on
        // alternately, the fastest of `reps` runs each: a busy machine's noise
        // falls on both sides.
        Reply a, b;
        if (off) generate(*off, prompt, 4, c.sampled);
        if (on) generate(*on, prompt, 4, c.sampled);
        auto faster = [](Reply& best, Reply r) {
            if (best.tokens.empty() || r.usage.decodeTokensPerSecond > best.usage.decodeTokensPerSecond) best = std::move(r);
        };
        for (int32_t rep = 0; rep < reps; ++rep) {
            if (off) faster(a, generate(*off, prompt, tokens, c.sampled));
            if (on) faster(b, generate(*on, prompt, tokens, c.sampled));
        }
        if (off) json += ",\"off\":" + runJson(a);
        if (on) json += ",\"on\":" + runJson(b);
        if (off && on) {
            const double speedup =
                a.usage.decodeTokensPerSecond > 0 ? b.usage.decodeTokensPerSecond / a.usage.decodeTokensPerSecond : 0.0;
            json += ",\"speedup\":" + jsonNumber(speedup) + ",\"identical\":" + (a.tokens == b.tokens ? "true" : "false");
        }
        json += "}";
    }
    return json + "}";
}

} // namespace weir::cli
