#pragma once
// The scheduler: one loop on the engine thread that owns every request and is
// the only code touching the KV pools.
//
//   admit -> plan one batch (a decode token of every running request plus
//   prefill chunks: --prefill-chunk tokens per step, shared max-min fairly by
//   every request that is prefilling or may start, so several long prompts
//   start together; then prompt-lookup drafts for decoding requests, from
//   free pages only) -> Model::forward -> sample (a verify step keeps the
//   drafts its sampler draws and rolls the rest back)
//   -> emit events -> cache computed prefixes, release out-of-window pages
//   -> (integrity check) -> repeat
//
// Pool pressure never throws: a waiting request starts only when the full
// pool can also hold what the running requests still need to finish their
// prompts, else it is deferred; a running request that cannot get its next
// pages preempts the newest running request (its computed prefix is offered
// to the prefix cache, its pages are dropped, and it is requeued at the head
// of the queue to be recomputed). A prompt longer than the context is refused
// at submission; anything shorter always fits alone, so a pool miss for a
// request running alone is a violation (an internal error, never a refusal).
// Every step runs inside a catch-all: an exception fails the requests it
// touched with Error and the loop goes on. Every request ends with exactly one
// terminal event.
//
// submit(), cancel(), clearPrefixCache(), resizePool() and status() are safe
// from any thread; run() is the engine thread's body. Once run() has ended,
// submit() ends the request at once (Cancelled, on the caller's thread) and
// runOnEngineThread() throws: nothing waits for a thread that is gone.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "weir/base/error.h"
#include "weir/types/cache_status.h"
#include "weir/types/generate.h"
#include "weir/types/maintenance_result.h"
#include "weir/types/token_logprobs.h"

namespace weir {

class Model;
class Tokenizer;
namespace kv {
class HybridKvCache;
enum class KvResult : uint8_t;
}
namespace grammar { class ConstraintFactory; }

struct SchedulerOptions {
    int32_t maxRunning = 4;        // --max-running-requests
    int32_t prefillChunk = 512;    // prefill tokens per step, over all requests
    int32_t retainGap = 1;         // decode steps between out-of-window releases (E)
    int32_t maxContext = 0;        // positions one request may use; 0 = the full pool's size
    int32_t maxWaiting = 64;       // beyond it a new request fails at once
    bool checkEveryStep = false;   // full integrity check after every step
    // Speculative decoding by prompt lookup (EngineOptions::speculative).
    bool speculative = false;
    int32_t draftTokens = 8;
    int32_t draftStepRows = 1;
    int32_t draftNgramMax = 3;
    int32_t draftNgramMin = 1;
    // Sample a step's rows on the backend's host threads when there are
    // several (false: one after another on the engine thread, the reference
    // the parallel draw must match token for token).
    bool sampleInParallel = true;
};

struct ActiveRequest;

// Thrown by Scheduler::runOnEngineThread once run() has ended, so a
// maintenance call can tell "the engine is gone" from a failure of its own.
class EngineThreadEnded : public Error {
public:
    EngineThreadEnded() : Error("the engine has shut down: its thread runs nothing more") {}
};

class Scheduler {
public:
    // Everything passed in must outlive the scheduler. `tokenizer` may be null
    // (events then carry ids only, no text, and no end-of-generation check).
    Scheduler(Model& model, kv::HybridKvCache& cache, const Tokenizer* tokenizer, const SchedulerOptions& options);
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // --- any thread ---
    // The sink gets exactly one terminal event, also when the engine has
    // shut down (then at once, from inside submit).
    uint64_t submit(GenerateRequest request, EventSink sink);
    void cancel(uint64_t id);
    // Runs `fn` on the engine thread between steps (pool maintenance); when
    // called on the engine thread itself, runs it at once. With `wait`, returns
    // when fn has run and rethrows what fn threw; without, an exception from
    // fn is counted as a violation in the status. Throws EngineThreadEnded at
    // once when run() has ended.
    void runOnEngineThread(std::function<void()> fn, bool wait);
    // Evicts every unreferenced cached page; waits. Ok, ShuttingDown or Failed.
    MaintenanceResult clearPrefixCache();
    // HybridKvCache::resize on the engine thread; Ok when done as asked, else
    // Clamped, Refused, Failed or ShuttingDown with why.
    MaintenanceResult resizePool(PoolKind pool, int64_t tokens);
    CacheStatus status() const;

    // --- engine thread ---
    // Loops until `stop` is set (then wakes up and ends every request left
    // with Cancelled). Call wake() after setting it.
    void run(const std::atomic<bool>& stop);
    void wake();
    // One iteration (inbox, admission, one forward pass, events). Returns
    // false when there was nothing to do. For tests and run().
    bool step();
    // The steps whose rows were sampled on the backend's host pool (one pool
    // job each) and the rows sampled so. For tests and benchmarks.
    struct ParallelSampling {
        uint64_t jobs = 0;
        uint64_t rows = 0;
    };
    ParallelSampling parallelSampling() const { return parallelSampling_; }

private:
    struct Planned {
        ActiveRequest* request;
        int32_t tokens;   // fed this step, starting at request->computed
    };

    bool drainInbox();
    void applyCancels(std::vector<uint64_t>& ids);
    bool refuseIfNeverFits(ActiveRequest& r);
    std::string badToken(const ActiveRequest& r) const;
    // This step's prefill: the cap each prefilling request gets (the budget
    // shared max-min fairly) and the waiting requests to try admitting.
    struct PrefillPlan {
        int32_t share = 0;
        std::vector<ActiveRequest*> admit;
    };
    struct Prefilling {
        const ActiveRequest* request;
        int64_t computed;   // tokens with KV, or the cached prefix it will attach
    };
    PrefillPlan planPrefill(int32_t budget);
    bool waitsForSharedPrefix(const ActiveRequest& r, int64_t reuse, std::span<const Prefilling> prefilling) const;
    int32_t holdingPages() const;
    void planRunning(std::vector<Planned>& plan, int32_t& budget, int32_t share);
    void admitWaiting(std::vector<Planned>& plan, int32_t& budget, int32_t share,
                      const std::vector<ActiveRequest*>& admit);
    bool allocateStep(ActiveRequest& r, int32_t& tokens);
    void failAlone(ActiveRequest& r, kv::KvResult res, int32_t tokens);
    void preempt(ActiveRequest& r);
    // Speculative decoding (scheduler_speculation.cpp): after every other
    // request has its pages for this step, each decoding request whose
    // context offers a draft gets slots for it from free pages only (never
    // evicting the prefix cache nor preempting anyone); the verify samples
    // row by row as plain decoding would and rolls the rejected tail back.
    void planDrafts(std::vector<Planned>& plan);
    void verifyDraft(ActiveRequest& r, float* rows, int32_t nVocab);
    void runBatch(std::vector<Planned>& plan);
    // Draws the next token from one row of logits (constraint, log
    // probabilities, sampler) and takes it (afterToken). false when the
    // request ended on the way.
    bool sampleRow(ActiveRequest& r, float* logits, int32_t nVocab);
    // A step's plain rows (scheduler_sampling.cpp) are drawn in three
    // passes: masked by their constraints on the engine thread, in order;
    // drawn (sampler, log probabilities), on the host pool when there are
    // several; taken (afterToken, events, finishing) on the engine thread in
    // plan order, exactly as sampleRow would have taken them one by one.
    struct Draw {
        ActiveRequest* request = nullptr;
        float* logits = nullptr;        // its row: masked, then rewritten by the sampler
        float* raw = nullptr;           // the row as the model produced it (log probabilities only)
        bool masked = false;            // raw was copied before the constraint's mask
        std::string refused;            // why the constraint ends the request ("" when it allows a token)
        int32_t token = -1;
        std::optional<TokenLogprobs> logprobs;
        std::exception_ptr failure;     // what drawing threw, rethrown when the row is taken
    };
    void drawRows(std::vector<Draw>& draws, int32_t nVocab);
    void maskRow(Draw& d, int32_t nVocab);
    void drawRow(Draw& d, int32_t nVocab) const;
    bool takeDraw(Draw& d);
    void afterToken(ActiveRequest& r, int32_t token);
    // Output constraints (scheduler_constraints.cpp): compiled when the
    // request is taken in ("" or why it is refused), applied to its logits
    // before each draw, advanced over each token drawn. false: the request
    // has been ended with an Error.
    std::string attachConstraint(ActiveRequest& r);
    // The mask's refusal ("" when some token is allowed); the caller ends the request.
    std::string constrainLogits(ActiveRequest& r, float* logits, int32_t nVocab);
    bool advanceConstraint(ActiveRequest& r, int32_t token);
    // An embed request whose prompt is computed: its hidden state (row `row` of
    // the model's final hidden rows), normalised, ends it.
    void finishEmbedding(ActiveRequest& r, size_t row);
    void emitToken(ActiveRequest& r, int32_t token, const std::string& text);
    void finish(ActiveRequest& r, Event::Kind kind, FinishReason reason, const std::string& message);
    void failAll(std::vector<ActiveRequest*> requests, const std::string& message);
    void removeFinished();
    void integrityCheck();
    void recordViolation(std::string what);
    void checkRequests();
    void publishStatus();
    void idleWait(const std::atomic<bool>& stop);
    ActiveRequest* findRunning(uint64_t id);
    int32_t contextLimit() const;

    Model& model_;
    kv::HybridKvCache& cache_;
    const Tokenizer* tokenizer_;
    SchedulerOptions opt_;

    // Inbox, shared with other threads.
    mutable std::mutex inboxMutex_;
    std::condition_variable inboxCv_;
    std::vector<std::unique_ptr<ActiveRequest>> incoming_;
    std::vector<uint64_t> cancels_;
    std::vector<std::function<void()>> commands_;
    bool stopped_ = false;  // run() has ended: the inbox takes nothing more
    std::atomic<uint64_t> nextId_{1};
    std::atomic<std::thread::id> engineThread_{};

    // Engine-thread state.
    std::deque<std::unique_ptr<ActiveRequest>> waiting_;
    std::vector<std::unique_ptr<ActiveRequest>> running_;  // admission order, oldest first
    uint64_t admissions_ = 0;
    uint64_t deferrals_ = 0, preemptions_ = 0, refusals_ = 0, prefixHitTokens_ = 0;
    uint64_t schedulerViolations_ = 0;
    uint64_t draftTokens_ = 0, acceptedDraftTokens_ = 0;
    std::deque<std::string> schedulerViolationDetails_;
    bool idleChecked_ = false;
    std::vector<float> logits_;
    std::vector<float> rawLogits_;  // the raw rows of the draws in flight that want log probabilities
    std::vector<Draw> draws_;       // this step's plain rows (kept for capacity)
    ParallelSampling parallelSampling_;
    std::unique_ptr<grammar::ConstraintFactory> constraints_;  // first constrained request builds it

    mutable std::mutex statusMutex_;
    CacheStatus status_;
};

} // namespace weir
