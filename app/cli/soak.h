#pragma once
// The workload that killed a peer server, as a reusable driver: several
// concurrent multi-turn conversations that share one long system prompt, with
// tool-result turns in between, driven through the public Engine API only.
// Used by `weir-cli soak` at full size and by the scheduler tests scaled
// down. Every conversation is deleted after a few turns and a fresh one
// starts, until the request budget is spent.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace weir {
class Engine;
}

namespace weir::cli {

struct SoakOptions {
    int32_t conversations = 4;          // run concurrently
    int32_t systemPromptTokens = 7700;  // shared by every conversation (approximate, at least this)
    int32_t requests = 300;             // total, over all conversations
    int32_t maxTokens = 24;             // per reply
    int32_t turnsPerConversation = 6;   // then the conversation is deleted and a new one starts
    int32_t toolEvery = 2;              // every Nth turn answers with a tool result
    double cancelFraction = 0.0;        // fraction of requests cancelled at a random point
    uint64_t seed = 1;
    // Called (from the conversation threads) after every `progressEvery`
    // finished requests with a one-line summary; unset = silent.
    std::function<void(const std::string&)> progress;
    int32_t progressEvery = 10;
};

struct SoakReport {
    uint64_t requests = 0, done = 0, failed = 0, refused = 0, cancelled = 0;
    uint64_t badTerminations = 0;       // requests whose terminal events were not exactly one
    uint64_t preemptions = 0, deferrals = 0, integrityChecks = 0, violations = 0;
    int64_t leakedFullPages = 0, leakedWindowPages = 0;  // after every conversation is deleted
    int32_t systemPromptTokens = 0;     // as tokenized
    uint64_t promptTokens = 0, cachedPromptTokens = 0, completionTokens = 0;
    double wallSeconds = 0;
    std::vector<std::string> errors;    // first few Error messages and violation details
    std::string toJson() const;
};

// Runs the workload to completion on `engine` and checks the pools afterwards.
SoakReport runSoak(Engine& engine, const SoakOptions& options);

// Text whose tokenization is at least `tokens` long (deterministic).
std::string makeSystemPrompt(const Engine& engine, int32_t tokens);

} // namespace weir::cli
