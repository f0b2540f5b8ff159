#pragma once
// A Scheduler driven one step() at a time on the test's own thread, over the
// tiny Gemma 3 and pools planned exactly as the Engine plans them. Tests
// decide what happens between two steps (submit, cancel, check), so an
// admission / preemption interleaving is reproduced exactly, every run.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weir/types/cache_status.h"
#include "weir/types/engine_options.h"
#include "weir/types/generate.h"
#include "engine/gguf/gguf_file.h"
#include "engine/kv/hybrid_kv_cache.h"
#include "engine/kv/kv_sizing.h"
#include "engine/models/model.h"
#include "engine/scheduler/scheduler.h"
#include "tests/engine/test_backend.h"

namespace weir::test {

// Everything one request delivered. Steps run on the caller's thread, so no
// locking is needed.
struct StepOutcome {
    std::vector<int32_t> tokens;
    int terminals = 0;
    int afterTerminal = 0;
    Event terminal;
    int64_t firstTokenStep = -1;  // the step that produced the first token
    int64_t terminalStep = -1;
    bool ended() const { return terminals > 0; }
};

class SteppedScheduler {
public:
    // `options.modelPath` must name a model file; the pools are planned and
    // checked from the options as the Engine does (weir::Error below a floor).
    explicit SteppedScheduler(const EngineOptions& options) {
        file_ = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(options.modelPath));
        model_ = loadModel(file_, weirtest::cpuBackend(options.threads));
        const kv::PoolPlan plan = kv::planPoolsOrThrow(options, model_->config());
        cache_ = std::make_unique<kv::HybridKvCache>(kv::KvCacheConfig::fromPlan(plan, model_->config()));
        SchedulerOptions so;
        so.maxRunning = options.maxRunningRequests;
        so.prefillChunk = options.prefillChunk;
        so.retainGap = options.retainGap;
        so.maxContext = int32_t(plan.maxContext);
        so.maxWaiting = options.maxWaiting;
        so.checkEveryStep = options.checkIntegrityEveryStep;
        so.speculative = options.speculative;
        so.draftTokens = options.draftTokens;
        so.draftNgramMax = options.draftNgramMax;
        so.draftNgramMin = options.draftNgramMin;
        scheduler_ = std::make_unique<Scheduler>(*model_, *cache_, nullptr, so);
    }

    // Queues a request (admitted by the next step). The outcome lives as long
    // as this object.
    StepOutcome& submit(std::vector<int32_t> prompt, int32_t maxTokens, uint64_t* id = nullptr) {
        GenerateRequest r;
        r.prompt = std::move(prompt);
        r.maxTokens = maxTokens;
        r.sampling.temperature = 0.0f;
        r.stopAtEndOfGeneration = false;
        outcomes_.push_back(std::make_unique<StepOutcome>());
        StepOutcome* out = outcomes_.back().get();
        const int64_t* step = &steps_;
        const uint64_t rid = scheduler_->submit(std::move(r), [out, step](const Event& ev) {
            if (out->terminals > 0) ++out->afterTerminal;
            if (ev.kind == Event::Kind::Token) {
                if (out->tokens.empty()) out->firstTokenStep = *step;
                out->tokens.push_back(ev.token);
                return;
            }
            ++out->terminals;
            out->terminal = ev;
            out->terminalStep = *step;
        });
        if (id) *id = rid;
        return *out;
    }

    void cancel(uint64_t id) { scheduler_->cancel(id); }
    // One scheduler iteration; false when there was nothing to do.
    bool step() {
        ++steps_;
        return scheduler_->step();
    }
    // Steps until the scheduler is idle (or `limit` steps, then false).
    bool runUntilIdle(int64_t limit = 100000) {
        for (int64_t i = 0; i < limit; ++i)
            if (!step()) return true;
        return false;
    }
    int64_t steps() const { return steps_; }

    CacheStatus status() const { return scheduler_->status(); }
    kv::HybridKvCache& cache() { return *cache_; }
    Scheduler& scheduler() { return *scheduler_; }
    const ModelConfig& modelConfig() const { return model_->config(); }

private:
    std::shared_ptr<const gguf::GgufFile> file_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<kv::HybridKvCache> cache_;
    std::unique_ptr<Scheduler> scheduler_;
    std::vector<std::unique_ptr<StepOutcome>> outcomes_;
    int64_t steps_ = 0;
};

} // namespace weir::test
