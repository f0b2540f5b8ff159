#pragma once
// The mixed load of issue 16: many streaming clients at once, prompts at and
// near the context limit, a few shared prefixes, random cancels and
// disconnects (a disconnect cancels the moment the first token arrives, as the
// HTTP server does). Used by `weir-cli soak --mixed` as a timed benchmark and
// by the scheduler tests scaled down. It counts what must never happen:
//   wrong refusal  an Error for a prompt that fits the context (one whose
//                  prompt + max_tokens runs past the context must end with
//                  finish Length, never an error)
//   wrong length   a Done whose token count is not min(max_tokens, context + 1 - prompt)
//   hung           no terminal event within hangSeconds
// plus violations, leaks and requests without exactly one terminal event.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace weir {
class Engine;
}

namespace weir::cli {

struct MixedSoakOptions {
    int32_t clients = 24;               // concurrent streaming clients
    int32_t requests = 2000;            // total, unless durationSeconds ends it first
    double durationSeconds = 0;         // > 0: stop starting requests after this long
    int32_t maxTokens = 20;             // per request: uniform in [1, maxTokens]
    double nearLimitFraction = 0.5;     // prompts within nearLimitTokens of the context
    int32_t nearLimitTokens = 8;
    double tooLongFraction = 0.02;      // prompts past the context (must be refused as too long)
    int32_t sharedPrefixes = 3;         // distinct prefixes prompts may start with
    double sharedFraction = 0.6;        // prompts that start with one of them
    double cancelFraction = 0.1;        // cancelled after a random number of tokens or at once
    double disconnectFraction = 0.05;   // cancelled when the first token arrives
    double hangSeconds = 600;           // a request silent this long counts as hung
    uint64_t seed = 1;
    std::function<void(const std::string&)> progress;  // one line every progressEvery requests
    int32_t progressEvery = 100;
};

struct MixedSoakReport {
    int32_t context = 0;                // the context limit every prompt was sized against
    uint64_t requests = 0, done = 0, cancelled = 0, errors = 0;
    uint64_t doneAtContext = 0;         // Done with finish Length because the context ran out
    uint64_t refusedTooLong = 0;        // prompts past the context, refused as they must be
    uint64_t queueFull = 0;             // more than --max-waiting waited: back-pressure, not a refusal
    uint64_t wrongRefusals = 0, wrongLengths = 0, hung = 0, badTerminations = 0;
    uint64_t preemptions = 0, deferrals = 0, integrityChecks = 0, violations = 0;
    int64_t leakedFullPages = 0, leakedWindowPages = 0;
    double ttftP50Ms = 0, ttftP90Ms = 0, ttftP99Ms = 0;
    double meanRunning = 0;             // sampled while requests were in flight
    int32_t maxRunning = 0;
    uint64_t promptTokens = 0, cachedPromptTokens = 0, completionTokens = 0;
    double wallSeconds = 0;
    std::vector<std::string> details;   // first few wrong refusals, wrong lengths, violations
    bool clean() const {
        return wrongRefusals == 0 && wrongLengths == 0 && hung == 0 && badTerminations == 0 && violations == 0 &&
               leakedFullPages == 0 && leakedWindowPages == 0;
    }
    std::string toJson() const;
};

// Runs the load on `engine` and checks the pools afterwards (the prefix cache
// is cleared: every page must be free again).
MixedSoakReport runMixedSoak(Engine& engine, const MixedSoakOptions& options);

} // namespace weir::cli
