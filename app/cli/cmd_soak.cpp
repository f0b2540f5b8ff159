// weir-cli soak: the concurrent multi-turn, shared-system-prompt, tool-call
// workload that crashed a peer server, run against the Engine with pool
// integrity checked after every step. Prints a JSON report; exits non-zero on
// any violation, leak, failed request or request without exactly one terminal event.
// --mixed: issue 16's mixed load instead (many clients, near-limit prompts,
// shared prefixes, cancels, disconnects; see mixed_soak.h), for a number of
// requests or --duration-seconds; also non-zero on a wrong refusal or a hung request.
#include <cstdint>
#include <cstdio>
#include <memory>

#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "app/cli/mixed_soak.h"
#include "app/cli/soak.h"
#include "weir/base/error.h"
#include "weir/engine.h"

namespace {

std::unique_ptr<weir::Engine> startEngine(const weir::EngineOptions& eo) {
    try {
        auto engine = std::make_unique<weir::Engine>(eo);
        const weir::CacheStatus st = engine->cacheStatus();
        std::fprintf(stderr, "soak: full pool %lld tokens, window pool %lld tokens (floor %lld)\n",
                     (long long)st.full.capacityTokens, (long long)st.window.capacityTokens,
                     (long long)st.window.floorTokens);
        return engine;
    } catch (const weir::Error& e) {
        std::fprintf(stderr, "soak: engine refused the configuration:\n%s\n", e.what());
        return nullptr;
    }
}

int runMixed(weir::cli::Args& args, weir::EngineOptions eo) {
    weir::cli::MixedSoakOptions mo;
    mo.clients = int32_t(args.intValue("--clients", mo.clients, 1, 4096));
    mo.requests = int32_t(args.intValue("--requests", mo.requests, 0, 1 << 24));
    mo.durationSeconds = args.floatValue("--duration-seconds", 0.0, 0.0, 7 * 24 * 3600.0);
    mo.maxTokens = int32_t(args.intValue("--max-tokens", mo.maxTokens, 1, 1 << 16));
    mo.nearLimitFraction = args.floatValue("--near-limit-fraction", mo.nearLimitFraction, 0.0, 1.0);
    mo.sharedPrefixes = int32_t(args.intValue("--shared-prefixes", mo.sharedPrefixes, 0, 1 << 16));
    mo.cancelFraction = args.floatValue("--cancel-fraction", mo.cancelFraction, 0.0, 1.0);
    mo.disconnectFraction = args.floatValue("--disconnect-fraction", mo.disconnectFraction, 0.0, 1.0);
    mo.hangSeconds = args.floatValue("--hang-seconds", mo.hangSeconds, 1.0, 7 * 24 * 3600.0);
    mo.seed = uint64_t(args.intValue("--seed", 1, 0, INT64_MAX));
    mo.progressEvery = int32_t(args.intValue("--progress-every", mo.progressEvery, 0, 1 << 24));
    mo.progress = [](const std::string& line) { std::fprintf(stderr, "soak: %s\n", line.c_str()); };
    args.rejectUnknown();
    if (eo.maxContext == 0) eo.maxContext = 2048;
    if (eo.kvReserveTokens == 0) eo.kvReserveTokens = eo.maxContext;  // the pool at the limit: the hard case
    auto engine = startEngine(eo);
    if (!engine) return 2;
    const weir::cli::MixedSoakReport r = weir::cli::runMixedSoak(*engine, mo);
    std::fputs(r.toJson().c_str(), stdout);
    return r.clean() ? 0 : 1;
}

int run(const std::vector<std::string>& argv) {
    weir::cli::Args args(argv);
    weir::EngineOptions eo;
    eo.maxRunningRequests = 4;
    weir::cli::readEngineFlags(args, eo);
    eo.checkIntegrityEveryStep = !args.flag("--no-step-check");
    if (args.flag("--mixed")) return runMixed(args, eo);

    weir::cli::SoakOptions so;
    // Bounded so the context derived below stays far inside 32 bits.
    so.conversations = int32_t(args.intValue("--conversations", 4, 1, 1024));
    so.systemPromptTokens = int32_t(args.intValue("--system-prompt-tokens", 7700, 0, 1 << 20));
    so.requests = int32_t(args.intValue("--requests", 300, 0, 1 << 24));
    so.maxTokens = int32_t(args.intValue("--max-tokens", so.maxTokens, 1, 1 << 16));
    so.turnsPerConversation = int32_t(args.intValue("--turns", so.turnsPerConversation, 1, 1024));
    so.toolEvery = int32_t(args.intValue("--tool-every", so.toolEvery, 0, 1 << 20));
    so.cancelFraction = args.floatValue("--cancel-fraction", 0.0, 0.0, 1.0);
    so.seed = uint64_t(args.intValue("--seed", 1, 0, INT64_MAX));
    so.progressEvery = int32_t(args.intValue("--progress-every", 10, 0, 1 << 24));
    so.progress = [](const std::string& line) { std::fprintf(stderr, "soak: %s\n", line.c_str()); };
    args.rejectUnknown();
    if (eo.maxContext == 0) {
        // Long enough for the system prompt plus every turn of one conversation.
        eo.maxContext = so.systemPromptTokens + so.turnsPerConversation * (so.maxTokens + 96) + 256;
    }

    auto engine = startEngine(eo);
    if (!engine) return 2;

    const weir::cli::SoakReport r = weir::cli::runSoak(*engine, so);
    std::fputs(r.toJson().c_str(), stdout);
    const bool ok = r.violations == 0 && r.leakedFullPages == 0 && r.leakedWindowPages == 0 &&
                    r.badTerminations == 0 && r.failed == 0;
    return ok ? 0 : 1;
}

weir::cli::Command reg{"soak",
                       "concurrent multi-turn conversations with a shared system prompt; checks the KV pools: "
                       "[--conversations N] [--system-prompt-tokens N] [--requests N] [--max-tokens N] [--turns N] "
                       "[--tool-every N] [--cancel-fraction F] [--seed S] [--no-step-check] and the engine flags; or --mixed "
                       "[--clients N] [--requests N] [--duration-seconds S] [--max-tokens N] [--near-limit-fraction F] "
                       "[--shared-prefixes N] [--cancel-fraction F] [--disconnect-fraction F] [--hang-seconds S]",
                       &run};

} // namespace
