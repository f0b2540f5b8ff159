#include "engine/scheduler/scheduler.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <future>
#include <span>
#include <thread>

#include "engine/grammar/constraint_factory.h"
#include "engine/kv/hybrid_kv_cache.h"
#include "engine/kv/kv_sizing.h"
#include "engine/models/model.h"
#include "engine/scheduler/active_request.h"
#include "engine/scheduler/prefill_share.h"
#include "engine/util/log.h"
#include "weir/base/error.h"

namespace weir {

namespace {

constexpr size_t kMaxViolationDetails = 32;

std::string poolName(kv::KvResult r) {
    return r == kv::KvResult::OutOfWindowPages ? "window" : "full";
}

constexpr const char* kShutDown = "engine shut down";

std::string describe(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        return x.what();
    } catch (...) {
        return "unknown exception";
    }
}

void deliver(const EventSink& sink, const Event& ev) {
    if (!sink) return;
    try {
        sink(ev);
    } catch (...) {
        // A client's exception must not take the engine thread down.
    }
}

} // namespace

Scheduler::Scheduler(Model& model, kv::HybridKvCache& cache,
                     const Tokenizer* tokenizer, const SchedulerOptions& options)
    : model_(model), cache_(cache), tokenizer_(tokenizer), opt_(options) {
    opt_.maxRunning = std::max(opt_.maxRunning, 1);
    opt_.prefillChunk = std::max(opt_.prefillChunk, 1);
    opt_.retainGap = std::max(opt_.retainGap, 1);
    publishStatus();
}

Scheduler::~Scheduler() = default;

// ---------------------------------------------------------------- any thread

uint64_t Scheduler::submit(GenerateRequest request, EventSink sink) {
    const uint64_t id = nextId_.fetch_add(1);
    const int32_t promptTokens = int32_t(request.prompt.size());
    auto r = std::make_unique<ActiveRequest>(id, std::move(request), std::move(sink), tokenizer_);
    {
        std::lock_guard<std::mutex> lock(inboxMutex_);
        if (!stopped_) {
            incoming_.push_back(std::move(r));
            r = nullptr;
        }
    }
    if (r) {
        // No engine thread will ever see it: its one terminal event comes now,
        // on this thread, the same one the requests running at shutdown got.
        Event ev;
        ev.kind = Event::Kind::Cancelled;
        ev.request = id;
        ev.text = kShutDown;
        ev.usage.promptTokens = promptTokens;
        deliver(r->sink, ev);
        return id;
    }
    inboxCv_.notify_all();
    return id;
}

void Scheduler::cancel(uint64_t id) {
    {
        std::lock_guard<std::mutex> lock(inboxMutex_);
        if (stopped_) return;  // every request has ended already
        cancels_.push_back(id);
    }
    inboxCv_.notify_all();
}

void Scheduler::runOnEngineThread(std::function<void()> fn, bool wait) {
    if (engineThread_.load() == std::this_thread::get_id()) {
        fn();
        return;
    }
    std::future<void> done;
    {
        std::lock_guard<std::mutex> lock(inboxMutex_);
        if (stopped_) throw EngineThreadEnded();
        if (wait) {
            auto promise = std::make_shared<std::promise<void>>();
            done = promise->get_future();
            commands_.push_back([fn = std::move(fn), promise] {
                try {
                    fn();
                    promise->set_value();
                } catch (...) {
                    promise->set_exception(std::current_exception());
                }
            });
        } else {
            commands_.push_back(std::move(fn));
        }
    }
    inboxCv_.notify_all();
    // run() executes every command queued before it stops taking them, so this returns.
    if (wait) done.get();
}

MaintenanceResult Scheduler::clearPrefixCache() {
    try {
        runOnEngineThread(
            [this] {
                cache_.evict(kv::PoolKind::Full, cache_.capacityPages(kv::PoolKind::Full));
                cache_.evict(kv::PoolKind::Window, cache_.capacityPages(kv::PoolKind::Window));
                publishStatus();
            },
            true);
    } catch (const EngineThreadEnded& e) {
        return MaintenanceResult::because(MaintenanceCode::ShuttingDown, e.what());
    } catch (...) {
        return MaintenanceResult::because(MaintenanceCode::Failed,
                                          "clearing the prefix cache failed: " + describe(std::current_exception()));
    }
    return MaintenanceResult::done();
}

namespace {

// A resize as asked is Ok; one the cache shrank less than asked is Clamped;
// an argument out of range (or memory it could not get) is Refused; counters
// that disagree are a Failure.
MaintenanceResult resizeOutcome(const kv::ResizeResult& r, int64_t askedTokens, int32_t pageSize) {
    const auto why = [&] {
        return r.message.empty() ? std::string("resize refused (") + kv::kvResultName(r.result) + ")" : r.message;
    };
    switch (r.result) {
    case kv::KvResult::Ok:
        if (r.capacityTokens == kv::ceilToPage(askedTokens, pageSize)) return MaintenanceResult::done();
        return MaintenanceResult::because(MaintenanceCode::Clamped, why());
    case kv::KvResult::BadArgument: return MaintenanceResult::because(MaintenanceCode::Refused, why());
    default: return MaintenanceResult::because(MaintenanceCode::Failed, why());
    }
}

} // namespace

MaintenanceResult Scheduler::resizePool(PoolKind pool, int64_t tokens) {
    MaintenanceResult result;
    try {
        runOnEngineThread(
            [&] {
                result = resizeOutcome(cache_.resize(pool, tokens), tokens, cache_.pageSize());
                publishStatus();
            },
            true);
    } catch (const EngineThreadEnded& e) {
        return MaintenanceResult::because(MaintenanceCode::ShuttingDown, e.what());
    } catch (...) {
        return MaintenanceResult::because(MaintenanceCode::Failed, std::string("resizing the ") +
                                                                       (pool == kv::PoolKind::Full ? "full" : "window") +
                                                                       " pool failed: " + describe(std::current_exception()));
    }
    return result;
}

CacheStatus Scheduler::status() const {
    std::lock_guard<std::mutex> lock(statusMutex_);
    return status_;
}

void Scheduler::wake() { inboxCv_.notify_all(); }

// ---------------------------------------------------------------- engine thread

void Scheduler::run(const std::atomic<bool>& stop) {
    engineThread_.store(std::this_thread::get_id());
    while (!stop.load()) {
        bool worked = false;
        try {
            worked = step();
        } catch (...) {
            // step() has its own catch-all; this only guards the guard.
        }
        if (!worked) idleWait(stop);
    }
    // Shutting down. From here on submit() and runOnEngineThread() answer at
    // once on their own thread; what reached the inbox before still runs
    // (commands) or ends (requests) here, so every caller gets its outcome.
    {
        std::lock_guard<std::mutex> lock(inboxMutex_);
        stopped_ = true;
    }
    drainInbox();
    for (auto& r : running_) finish(*r, Event::Kind::Cancelled, FinishReason::Stop, kShutDown);
    for (auto& r : waiting_) finish(*r, Event::Kind::Cancelled, FinishReason::Stop, kShutDown);
    removeFinished();
    publishStatus();
    engineThread_.store(std::thread::id());  // a later thread may get this id
}

void Scheduler::idleWait(const std::atomic<bool>& stop) {
    if (!idleChecked_) {
        // Idle is the cheap moment for the full recount.
        if (!opt_.checkEveryStep) integrityCheck();
        publishStatus();
        idleChecked_ = true;
    }
    std::unique_lock<std::mutex> lock(inboxMutex_);
    inboxCv_.wait_for(lock, std::chrono::milliseconds(200), [&] {
        return stop.load() || !incoming_.empty() || !cancels_.empty() || !commands_.empty();
    });
}

bool Scheduler::step() {
    engineThread_.store(std::this_thread::get_id());
    bool worked = false;
    try {
        worked = drainInbox();
        if (!running_.empty() || !waiting_.empty()) {
            worked = true;
            idleChecked_ = false;
            std::vector<Planned> plan;
            int32_t budget = opt_.prefillChunk;
            const PrefillPlan prefill = planPrefill(budget);
            planRunning(plan, budget, prefill.share);
            admitWaiting(plan, budget, prefill.share, prefill.admit);
            planDrafts(plan);
            if (!plan.empty()) runBatch(plan);
        }
    } catch (const std::exception& e) {
        failAll({}, std::string("internal error in the scheduler step: ") + e.what());
    } catch (...) {
        failAll({}, "internal error in the scheduler step (unknown exception)");
    }
    removeFinished();
    if (opt_.checkEveryStep && worked) integrityCheck();
    publishStatus();
    return worked;
}

bool Scheduler::drainInbox() {
    std::vector<std::unique_ptr<ActiveRequest>> in;
    std::vector<uint64_t> cancels;
    std::vector<std::function<void()>> commands;
    {
        std::lock_guard<std::mutex> lock(inboxMutex_);
        in.swap(incoming_);
        cancels.swap(cancels_);
        commands.swap(commands_);
    }
    for (auto& r : in) {
        if (int32_t(waiting_.size()) >= opt_.maxWaiting) {
            ++refusals_;
            r->error = ErrorCode::QueueFull;
            finish(*r, Event::Kind::Error, FinishReason::Stop,
                   "the wait queue is full (" + std::to_string(opt_.maxWaiting) +
                       " requests waiting); try again later");
        } else if (r->tokens.empty()) {
            r->error = ErrorCode::BadRequest;
            finish(*r, Event::Kind::Error, FinishReason::Stop, "empty prompt: nothing to generate from");
        } else if (r->maxTokens <= 0) {
            r->error = ErrorCode::BadRequest;
            finish(*r, Event::Kind::Error, FinishReason::Stop,
                   "maxTokens must be at least 1 (got " + std::to_string(r->maxTokens) + ")");
        } else if (const std::string bad = badToken(*r); !bad.empty()) {
            r->error = ErrorCode::BadRequest;
            finish(*r, Event::Kind::Error, FinishReason::Stop, bad);
        } else if (const std::string refused = attachConstraint(*r); !refused.empty()) {
            r->error = ErrorCode::BadRequest;
            finish(*r, Event::Kind::Error, FinishReason::Stop, refused);
        } else if (!refuseIfNeverFits(*r)) {
            waiting_.push_back(std::move(r));
        }
    }
    applyCancels(cancels);
    for (auto& fn : commands) {
        // Waited-for commands hand their exception to the caller; one nobody
        // waits for is reported in the status, like any other fault.
        try {
            fn();
        } catch (...) {
            ++schedulerViolations_;
            schedulerViolationDetails_.push_front("a queued engine-thread command failed: " +
                                                  describe(std::current_exception()));
            if (schedulerViolationDetails_.size() > kMaxViolationDetails) schedulerViolationDetails_.pop_back();
        }
    }
    return !in.empty() || !cancels.empty() || !commands.empty();
}

std::string Scheduler::badToken(const ActiveRequest& r) const {
    // Caught here, one request fails; caught in the forward pass, the whole batch would.
    const int32_t nVocab = model_.config().nVocab;
    for (size_t i = 0; i < r.tokens.size(); ++i)
        if (r.tokens[i] < 0 || r.tokens[i] >= nVocab)
            return "prompt token " + std::to_string(i) + " has id " + std::to_string(r.tokens[i]) +
                   ", outside the vocabulary of " + std::to_string(nVocab) + " tokens";
    return {};
}

bool Scheduler::refuseIfNeverFits(ActiveRequest& r) {
    const int64_t P = cache_.pageSize();
    const int64_t fullTokens = cache_.capacityPages(kv::PoolKind::Full) * P;
    const int64_t n = int64_t(r.tokens.size());
    std::string why;
    if (n > fullTokens) {
        why = "prompt of " + std::to_string(n) + " tokens can never fit: the full KV pool holds " +
              std::to_string(fullTokens) + " tokens (raise --kv-reserve-tokens)";
    } else if (n > contextLimit()) {
        why = "prompt of " + std::to_string(n) + " tokens exceeds the context limit of " +
              std::to_string(contextLimit()) + " tokens (--max-context)";
    }
    if (why.empty()) return false;
    ++refusals_;
    r.error = ErrorCode::TooLong;
    finish(r, Event::Kind::Error, FinishReason::Stop, why);
    return true;
}

void Scheduler::applyCancels(std::vector<uint64_t>& ids) {
    for (uint64_t id : ids) {
        for (auto& r : running_)
            if (r->id == id) finish(*r, Event::Kind::Cancelled, FinishReason::Stop, "cancelled");
        for (auto& r : waiting_)
            if (r->id == id) finish(*r, Event::Kind::Cancelled, FinishReason::Stop, "cancelled");
    }
    // Pages of cancelled requests go back now, not at the end of the step.
    if (!ids.empty()) removeFinished();
}

int32_t Scheduler::contextLimit() const {
    const int64_t full = cache_.capacityPages(kv::PoolKind::Full) * cache_.pageSize();
    const int64_t limit = opt_.maxContext > 0 ? std::min<int64_t>(opt_.maxContext, full) : full;
    return int32_t(std::min<int64_t>(limit, INT32_MAX));
}

int32_t Scheduler::holdingPages() const {
    int32_t n = 0;
    for (auto& o : running_) n += (!o->finished && o->seq >= 0) ? 1 : 0;
    return n;
}

bool Scheduler::waitsForSharedPrefix(const ActiveRequest& r, int64_t reuse,
                                     std::span<const Prefilling> prefilling) const {
    // Worth waiting for: a shared prefix of at least a chunk (and a page) that
    // another request is about to compute and cache. A shorter one (a chat
    // template's first tokens) is cheaper to compute twice than to queue behind.
    const int64_t worth = std::max<int64_t>(cache_.pageSize(), opt_.prefillChunk);
    const size_t limit = r.tokens.size() - 1;  // the last token is never matched
    for (const Prefilling& o : prefilling) {
        if (o.request == &r) continue;
        const size_t n = std::min(limit, o.request->tokens.size());
        const auto first = r.tokens.begin();
        const int64_t common =
            std::mismatch(first, first + std::ptrdiff_t(n), o.request->tokens.begin()).first - first;
        if (common >= worth && reuse < common && o.computed < common) return true;
    }
    return false;
}

Scheduler::PrefillPlan Scheduler::planPrefill(int32_t budget) {
    PrefillPlan p;
    const int64_t P = cache_.pageSize();
    std::vector<Prefilling> prefilling;
    std::vector<int32_t> demands;
    // Full pages the running requests still need to finish their prompts
    // (and take one decode step): admission keeps that much for them, so
    // requests started together do not grow into each other and preempt one
    // another over and over.
    int64_t reserved = 0;
    auto pagesToEnd = [&](const ActiveRequest& r) {
        return kv::pagesFor(std::min<int64_t>(int64_t(r.tokens.size()) + 1, contextLimit()), P);
    };
    for (auto& r : running_) {
        if (r->finished || r->seq < 0) continue;
        const int64_t held = cache_.sequenceInfo(r->seq).fullTokens / P;
        reserved += std::max<int64_t>(0, pagesToEnd(*r) - held);
        if (r->decoding()) continue;
        prefilling.push_back({r.get(), r->computed});
        demands.push_back(r->remaining());
    }
    int64_t available = cache_.availablePages(kv::PoolKind::Full);
    // Waiting requests that could start this step, first come first served;
    // one sharing a long uncomputed prefix with a request already prefilling
    // waits for that request to cache it instead of computing it again.
    const int32_t holding = holdingPages();
    for (auto& r : waiting_) {
        if (holding + int32_t(p.admit.size()) >= opt_.maxRunning) break;
        if (r->finished) continue;
        const kv::PrefixMatch m = cache_.matchPrefix(r->tokens);
        const int64_t reuse = std::min<int64_t>(m.reuseTokens, int64_t(r->tokens.size()) - 1);
        if (waitsForSharedPrefix(*r, reuse, prefilling)) continue;
        const int64_t need = pagesToEnd(*r) - reuse / P;
        // Its attached prefix stops being evictable.
        const int64_t left = available - m.evictableReuseTokens / P;
        if ((holding > 0 || !p.admit.empty()) && reserved + need > left) {
            // Alone it always fits; beside the others it waits for their pages.
            if (!r->deferred) {
                r->deferred = true;
                ++deferrals_;
            }
            break;
        }
        reserved += need;
        available = left;
        p.admit.push_back(r.get());
        prefilling.push_back({r.get(), reuse});
        demands.push_back(std::max<int32_t>(1, int32_t(int64_t(r->tokens.size()) - reuse)));
    }
    p.share = fairPrefillShare(demands, budget);
    return p;
}

void Scheduler::planRunning(std::vector<Planned>& plan, int32_t& budget, int32_t share) {
    // Oldest first: when pages are short, the newest requests give way.
    for (size_t i = 0; i < running_.size(); ++i) {
        ActiveRequest& r = *running_[i];
        if (r.finished || r.seq < 0) continue;
        int32_t n = r.decoding() ? 1 : std::min({r.remaining(), budget, share});
        if (n <= 0) continue;  // no prefill budget left this step
        const bool prefill = !r.decoding();
        if (!allocateStep(r, n)) continue;
        plan.push_back({&r, n});
        if (prefill) budget -= n;
    }
}

bool Scheduler::allocateStep(ActiveRequest& r, int32_t& tokens) {
    for (;;) {
        const kv::KvResult res = cache_.allocate(r.seq, tokens);
        if (res == kv::KvResult::Ok) return true;
        if (res != kv::KvResult::OutOfFullPages && res != kv::KvResult::OutOfWindowPages) {
            finish(r, Event::Kind::Error, FinishReason::Stop,
                   std::string("the KV cache refused to allocate for this request (") + kv::kvResultName(res) +
                       "); see the integrity log");
            return false;
        }
        // The newest running request that has not been planned yet gives way.
        ActiveRequest* victim = nullptr;
        for (auto& o : running_) {
            if (o.get() == &r || o->finished || o->seq < 0 || o->admittedAt < r.admittedAt) continue;
            if (!victim || o->admittedAt > victim->admittedAt) victim = o.get();
        }
        if (victim) {
            preempt(*victim);
            continue;
        }
        bool othersHoldPages = false;
        for (auto& o : running_)
            if (o.get() != &r && !o->finished && o->seq >= 0) othersHoldPages = true;
        if (othersHoldPages) {
            // Older requests keep going; this one is recomputed once they make room.
            preempt(r);
            return false;
        }
        failAlone(r, res, tokens);
        return false;
    }
}

void Scheduler::failAlone(ActiveRequest& r, kv::KvResult res, int32_t tokens) {
    // Submission refused every prompt beyond the context, and generation stops
    // at it, so a request running alone always fits both pools (the window
    // pool's floor covers one request). A miss here is lost bookkeeping, never
    // the request's fault: a violation, reported as an internal error.
    const kv::PoolKind pool = res == kv::KvResult::OutOfWindowPages ? kv::PoolKind::Window : kv::PoolKind::Full;
    const int64_t P = cache_.pageSize();
    const kv::SequenceInfo info = cache_.sequenceInfo(r.seq);
    const std::string what =
        "the " + poolName(res) + " KV pool could not give request " + std::to_string(r.id) + " room for " +
        std::to_string(r.computed + tokens) + " tokens although nothing else runs (capacity " +
        std::to_string(cache_.capacityPages(pool) * P) + " tokens, free " +
        std::to_string(cache_.freePages(pool) * P) + ", evictable " + std::to_string(cache_.evictablePages(pool) * P) +
        ", held by this request " +
        std::to_string(pool == kv::PoolKind::Window ? info.windowTokens : info.fullTokens) + ")";
    recordViolation(what);
    r.error = ErrorCode::Internal;
    finish(r, Event::Kind::Error, FinishReason::Stop, "internal error: " + what + "; see the integrity log");
}

void Scheduler::preempt(ActiveRequest& r) {
    ++preemptions_;
    ++r.preemptions;
    if (logEnabled())
        logLine(LogLevel::Info, "scheduler",
                "request " + std::to_string(r.id) + " preempted after " + std::to_string(r.computed) +
                    " tokens (the pools were full); it waits at the head of the queue");
    if (r.seq >= 0) {
        // What was computed stays useful while its pages survive in the cache.
        cache_.cachePrefix(r.seq, std::span<const int32_t>(r.tokens.data(), size_t(r.computed)));
        cache_.closeSequence(r.seq);
        r.seq = -1;
    }
    r.computed = 0;
    r.sinceRelease = 0;
    // Moved to the head of the wait queue by removeFinished().
}

void Scheduler::admitWaiting(std::vector<Planned>& plan, int32_t& budget, int32_t share,
                             const std::vector<ActiveRequest*>& admit) {
    auto take = [&](ActiveRequest& r) {
        auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& w) { return w.get() == &r; });
        std::unique_ptr<ActiveRequest> owned = std::move(*it);
        waiting_.erase(it);
        return owned;
    };
    for (ActiveRequest* candidate : admit) {
        if (holdingPages() >= opt_.maxRunning) break;
        ActiveRequest& r = *candidate;
        if (r.finished) continue;
        r.seq = cache_.openSequence(r.id);
        if (r.seq < 0) {
            finish(r, Event::Kind::Error, FinishReason::Stop, "the KV cache could not open a sequence");
            continue;
        }
        cache_.attachPrefix(r.seq, r.tokens);
        r.computed = int32_t(cache_.sequenceInfo(r.seq).length);
        const int32_t n = r.decoding() ? 1 : std::min({r.remaining(), budget, share});
        auto undo = [&] {
            cache_.closeSequence(r.seq);
            r.seq = -1;
            r.computed = 0;
        };
        if (n <= 0) {  // no prefill budget left this step
            undo();
            break;
        }
        const kv::KvResult res = cache_.allocate(r.seq, n);
        if (res != kv::KvResult::Ok) {
            const bool pressure = res == kv::KvResult::OutOfFullPages || res == kv::KvResult::OutOfWindowPages;
            if (pressure && holdingPages() > 0) {
                // Others hold the pages it needs; it waits for them (first come, first served).
                undo();
                if (!r.deferred) {
                    r.deferred = true;
                    ++deferrals_;
                }
                break;
            }
            if (pressure) {
                failAlone(r, res, n);
            } else {
                finish(r, Event::Kind::Error, FinishReason::Stop,
                       std::string("the KV cache refused to allocate for this request (") + kv::kvResultName(res) +
                           ")");
            }
            continue;  // finish() closed its sequence; removeFinished() drops it
        }
        r.deferred = false;
        r.admittedAt = ++admissions_;
        r.prefixHitTokens = r.computed;
        prefixHitTokens_ += uint64_t(r.computed);
        if (!r.everAdmitted) r.cachedPromptTokens = std::min(r.computed, r.promptTokens);
        r.everAdmitted = true;
        const bool prefill = !r.decoding();
        running_.push_back(take(r));
        plan.push_back({&r, n});
        if (prefill) budget -= n;
    }
}

void Scheduler::runBatch(std::vector<Planned>& plan) {
    Batch batch;
    for (const Planned& p : plan) {
        ActiveRequest& r = *p.request;
        const int32_t last = int32_t(r.tokens.size()) - 1;
        // A verify step: the last token, then its drafts, every row kept.
        const bool verify = !r.draft.empty();
        for (int32_t i = 0; i < p.tokens; ++i) {
            const int32_t pos = r.computed + i;
            const int32_t token = pos <= last ? r.tokens[size_t(pos)] : r.draft[size_t(pos - last - 1)];
            batch.add(token, r.seq, pos, pos >= last, verify);
        }
    }
    try {
        model_.forward(batch, cache_, logits_);
    } catch (const std::exception& e) {
        std::vector<ActiveRequest*> affected;
        for (const Planned& p : plan) affected.push_back(p.request);
        failAll(affected, std::string("forward pass failed: ") + e.what());
        return;
    }
    const int32_t nVocab = model_.config().nVocab;
    // The plain rows (a request fed its last token, not verifying drafts),
    // drawn before any is taken (scheduler_sampling.cpp).
    draws_.clear();
    size_t row = 0;
    for (const Planned& p : plan) {
        ActiveRequest& r = *p.request;
        if (!r.draft.empty()) {
            row += r.draft.size() + 1;
        } else if (r.remaining() == p.tokens) {
            if (!r.embed) {
                Draw& d = draws_.emplace_back();
                d.request = &r;
                d.logits = logits_.data() + row * size_t(nVocab);
            }
            ++row;
        }
    }
    drawRows(draws_, nVocab);
    size_t draw = 0;
    row = 0;
    for (const Planned& p : plan) {
        ActiveRequest& r = *p.request;
        if (!r.draft.empty()) {
            const int32_t before = r.computed;
            float* rows = logits_.data() + row * size_t(nVocab);
            row += r.draft.size() + 1;
            verifyDraft(r, rows, nVocab);
            r.draft.clear();
            if (r.finished || r.seq < 0) continue;
            // Released by tokens written, so a step that keeps several never
            // holds more window than the floor's retain gap allows.
            r.sinceRelease += r.computed - before;
            if (r.sinceRelease >= opt_.retainGap) {
                cache_.releaseOutOfWindow(r.seq);
                r.sinceRelease = 0;
            }
            continue;
        }
        const bool prefill = r.remaining() > 1;
        r.computed += p.tokens;
        if (r.remaining() == 0) {
            ++row;
            if (r.embed) {
                finishEmbedding(r, row - 1);
                continue;
            }
            takeDraw(draws_[draw++]);
        }
        if (r.finished || r.seq < 0) continue;
        if (prefill && !r.embed) {
            // Share the computed prefix at once: a second conversation with the
            // same system prompt reuses it even while this one is still running.
            cache_.cachePrefix(r.seq, std::span<const int32_t>(r.tokens.data(), size_t(r.computed)));
            cache_.releaseOutOfWindow(r.seq);
            r.sinceRelease = 0;
        } else if (++r.sinceRelease >= opt_.retainGap) {
            cache_.releaseOutOfWindow(r.seq);
            r.sinceRelease = 0;
        }
    }
}

void Scheduler::afterToken(ActiveRequest& r, int32_t token) {
    r.tokens.push_back(token);
    ++r.generated;
    const auto now = ActiveRequest::Clock::now();
    if (r.generated == 1) r.firstToken = now;
    r.lastToken = now;
    if ((r.constraint || r.lazyConstraint) && !advanceConstraint(r, token)) return;

    // Text still held back (an incomplete character, a possible stop string) at the end.
    auto flushText = [&r](bool& stopped) {
        std::string tail = r.detokenizer ? r.detokenizer->flush() : std::string();
        StopStringMatcher::Result m = r.stops.push(tail);
        stopped = m.stopped;
        return stopped ? m.text : m.text + r.stops.flush();
    };

    if (r.stopAtEndOfGeneration && tokenizer_ && tokenizer_->isEndOfGeneration(token)) {
        bool stopped = false;
        const std::string text = flushText(stopped);
        r.pendingLogprobs.reset();  // the end-of-generation token is not part of the reply
        if (!text.empty()) emitToken(r, token, text);
        finish(r, Event::Kind::Done, stopped ? FinishReason::StopString : FinishReason::Stop, "");
        return;
    }
    const std::string delta = r.detokenizer ? r.detokenizer->push(token) : std::string();
    StopStringMatcher::Result m = r.stops.push(delta);
    if (m.stopped) {
        emitToken(r, token, m.text);
        finish(r, Event::Kind::Done, FinishReason::StopString, "");
        return;
    }
    const bool atLength = r.generated >= r.maxTokens;
    const bool atContext = int64_t(r.tokens.size()) - 1 >= contextLimit();
    // A complete document that nothing may follow is the end of the reply.
    const bool documentDone = r.constraint && r.constraint->finished();
    if (!atLength && !atContext && !documentDone) {
        emitToken(r, token, m.text);
        return;
    }
    bool stopped = false;
    const std::string text = m.text + flushText(stopped);
    emitToken(r, token, text);
    const FinishReason reason =
        stopped ? FinishReason::StopString : documentDone ? FinishReason::Stop : FinishReason::Length;
    finish(r, Event::Kind::Done, reason, "");
}

void Scheduler::finishEmbedding(ActiveRequest& r, size_t row) {
    const int64_t E = model_.config().nEmbd;
    const std::span<const float> hidden = model_.finalHidden();
    if (hidden.size() < (row + 1) * size_t(E)) {
        finish(r, Event::Kind::Error, FinishReason::Stop, "internal error: the model gave no final hidden state");
        return;
    }
    const float* h = hidden.data() + row * size_t(E);
    double norm = 0;
    for (int64_t i = 0; i < E; ++i) norm += double(h[i]) * double(h[i]);
    norm = std::sqrt(norm);
    r.embedding.resize(size_t(E));
    for (int64_t i = 0; i < E; ++i) r.embedding[size_t(i)] = norm > 0 ? float(double(h[i]) / norm) : 0.0f;
    finish(r, Event::Kind::Done, FinishReason::Stop, "");
}

void Scheduler::emitToken(ActiveRequest& r, int32_t token, const std::string& text) {
    Event ev;
    ev.kind = Event::Kind::Token;
    ev.request = r.id;
    ev.token = token;
    ev.text = text;
    ev.logprobs = std::move(r.pendingLogprobs);
    r.pendingLogprobs.reset();
    deliver(r.sink, ev);
}

void Scheduler::finish(ActiveRequest& r, Event::Kind kind, FinishReason reason, const std::string& message) {
    if (r.finished) return;
    r.finished = true;
    if (r.seq >= 0) {
        try {
            // A finished conversation's tokens are the next turn's prefix.
            // An embedding's prompt is not a conversation that continues.
            if (kind == Event::Kind::Done && !r.embed)
                cache_.cachePrefix(r.seq, std::span<const int32_t>(r.tokens.data(), size_t(r.computed)));
        } catch (...) {
        }
        cache_.closeSequence(r.seq);
        r.seq = -1;
    }
    // A client that reads the status after the terminal event sees the pages back.
    publishStatus();
    Event ev;
    ev.kind = kind;
    ev.request = r.id;
    ev.finish = reason;
    if (kind == Event::Kind::Done && reason == FinishReason::StopString) ev.stopIndex = r.stops.matched();
    if (kind != Event::Kind::Done) ev.text = message;
    if (kind == Event::Kind::Error) ev.error = r.error;
    if (kind == Event::Kind::Done) ev.embedding = std::move(r.embedding);
    Usage& u = ev.usage;
    u.promptTokens = r.promptTokens;
    u.completionTokens = r.generated;
    u.cachedPromptTokens = r.cachedPromptTokens;
    u.draftTokens = r.draftTokens;
    u.acceptedDraftTokens = r.acceptedDraftTokens;
    if (r.generated > 0) {
        u.timeToFirstTokenMs = std::chrono::duration<double, std::milli>(r.firstToken - r.submitted).count();
        const double decodeSeconds = std::chrono::duration<double>(r.lastToken - r.firstToken).count();
        if (r.generated > 1 && decodeSeconds > 0) u.decodeTokensPerSecond = double(r.generated - 1) / decodeSeconds;
    }
    deliver(r.sink, ev);
    r.sink = nullptr;  // nothing after the terminal event
}

void Scheduler::failAll(std::vector<ActiveRequest*> requests, const std::string& message) {
    // Without a list: everything holding pages, since any of it may be half-updated.
    if (requests.empty()) {
        for (auto& r : running_) requests.push_back(r.get());
        for (auto& r : waiting_)
            if (r->seq >= 0) requests.push_back(r.get());
    }
    for (ActiveRequest* r : requests) {
        try {
            finish(*r, Event::Kind::Error, FinishReason::Stop, message);
        } catch (...) {
        }
    }
}

void Scheduler::removeFinished() {
    std::vector<std::unique_ptr<ActiveRequest>> requeue;
    std::vector<std::unique_ptr<ActiveRequest>> keep;
    for (auto& r : running_) {
        if (r->finished) continue;
        if (r->seq < 0) requeue.push_back(std::move(r));
        else keep.push_back(std::move(r));
    }
    running_.swap(keep);
    std::erase_if(waiting_, [](const std::unique_ptr<ActiveRequest>& r) { return r->finished; });
    // Preempted requests go first, oldest at the head.
    std::sort(requeue.begin(), requeue.end(),
              [](const auto& a, const auto& b) { return a->admittedAt > b->admittedAt; });
    for (auto& r : requeue) waiting_.push_front(std::move(r));
}

void Scheduler::integrityCheck() {
    cache_.checkIntegrity();
    checkRequests();
}

void Scheduler::recordViolation(std::string what) {
    ++schedulerViolations_;
    schedulerViolationDetails_.push_front(std::move(what));
    if (schedulerViolationDetails_.size() > kMaxViolationDetails) schedulerViolationDetails_.pop_back();
}

void Scheduler::checkRequests() {
    auto record = [this](std::string what) { recordViolation(std::move(what)); };
    int32_t holding = 0;
    for (auto& r : running_) {
        if (r->finished || r->seq < 0) continue;
        ++holding;
        const kv::SequenceInfo info = cache_.sequenceInfo(r->seq);
        if (info.request != r->id)
            record("request " + std::to_string(r->id) + " runs on sequence " + std::to_string(r->seq) +
                   " which belongs to request " + std::to_string(info.request));
        if (info.length != r->computed)
            record("request " + std::to_string(r->id) + " computed " + std::to_string(r->computed) +
                   " tokens but its sequence has " + std::to_string(info.length) + " slots");
    }
    if (holding > opt_.maxRunning)
        record(std::to_string(holding) + " requests hold pages, more than --max-running-requests " +
               std::to_string(opt_.maxRunning));
    for (auto& r : waiting_)
        if (r->seq >= 0)
            record("waiting request " + std::to_string(r->id) + " still holds sequence " + std::to_string(r->seq));
}

void Scheduler::publishStatus() {
    CacheStatus s;
    cache_.fillStatus(s);
    s.prefixHitTokens = prefixHitTokens_;
    s.deferrals = deferrals_;
    s.preemptions = preemptions_;
    s.refusals = refusals_;
    s.draftTokens = draftTokens_;
    s.acceptedDraftTokens = acceptedDraftTokens_;
    s.violations += schedulerViolations_;
    s.violationDetails.insert(s.violationDetails.begin(), schedulerViolationDetails_.begin(),
                              schedulerViolationDetails_.end());
    int32_t running = 0;
    for (auto& r : running_) {
        if (r->finished || r->seq < 0) continue;
        ++running;
        const kv::SequenceInfo info = cache_.sequenceInfo(r->seq);
        RequestStatus rs;
        rs.id = r->id;
        rs.tag = r->tag;
        rs.state = r->state();
        rs.fullTokens = info.fullTokens;
        rs.windowTokens = info.windowTokens;
        rs.prefixHitTokens = r->prefixHitTokens;
        rs.promptTokens = r->promptTokens;
        rs.generatedTokens = r->generated;
        s.requests.push_back(std::move(rs));
    }
    for (auto& r : waiting_) {
        if (r->finished) continue;
        RequestStatus rs;
        rs.id = r->id;
        rs.tag = r->tag;
        rs.state = RequestState::Waiting;
        rs.promptTokens = r->promptTokens;
        rs.generatedTokens = r->generated;
        s.requests.push_back(std::move(rs));
    }
    s.running = running;
    s.waiting = int32_t(waiting_.size());
    std::lock_guard<std::mutex> lock(statusMutex_);
    status_ = std::move(s);
}

} // namespace weir
