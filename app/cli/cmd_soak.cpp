// weir-cli soak: the concurrent multi-turn, shared-system-prompt, tool-call
// workload that crashed a peer server, run against the Engine with pool
// integrity checked after every step. Prints a JSON report; exits non-zero on
// any violation, leak, failed request or request without exactly one terminal event.
#include <cstdint>
#include <cstdio>

#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "weir/engine.h"
#include "weir/soak.h"
#include "weir/base/error.h"

namespace {

int run(const std::vector<std::string>& argv) {
    weir::cli::Args args(argv);
    weir::EngineOptions eo;
    eo.maxRunningRequests = 4;
    weir::cli::readEngineFlags(args, eo);
    eo.checkIntegrityEveryStep = !args.flag("--no-step-check");

    weir::SoakOptions so;
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

    std::unique_ptr<weir::Engine> engine;
    try {
        engine = std::make_unique<weir::Engine>(eo);
    } catch (const weir::Error& e) {
        std::fprintf(stderr, "soak: engine refused the configuration:\n%s\n", e.what());
        return 2;
    }
    const weir::CacheStatus st = engine->cacheStatus();
    std::fprintf(stderr, "soak: full pool %lld tokens, window pool %lld tokens (floor %lld)\n",
                 (long long)st.full.capacityTokens, (long long)st.window.capacityTokens,
                 (long long)st.window.floorTokens);

    const weir::SoakReport r = weir::runSoak(*engine, so);
    std::fputs(r.toJson().c_str(), stdout);
    const bool ok = r.violations == 0 && r.leakedFullPages == 0 && r.leakedWindowPages == 0 &&
                    r.badTerminations == 0 && r.failed == 0;
    return ok ? 0 : 1;
}

weir::cli::Command reg{"soak",
                       "concurrent multi-turn conversations with a shared system prompt; checks the KV pools: "
                       "[--conversations N] [--system-prompt-tokens N] [--requests N] [--max-tokens N] [--turns N] "
                       "[--tool-every N] [--cancel-fraction F] [--seed S] [--no-step-check] and the engine flags",
                       &run};

} // namespace
