// The scheduler's side of speculative decoding by prompt lookup.
//
// Why the output is the one plain decoding gives, greedy or sampled:
// - Row j of a verify step is computed from exactly the tokens plain decoding
//   would have fed by then (the last token and the j drafts before it, all
//   kept so far), and its rows round as a batch of one (BatchToken::alone),
//   so its logits are bit for bit those of the decode step it stands for.
// - The rows are sampled in order by the request's own sampler, with the
//   history (penalties), constraint state and log probabilities plain
//   decoding would have at that position, and the sampler draws from its
//   RNG exactly once per token taken. Sampling stops at the first row whose
//   token is not the next draft: no row past it is drawn from, so the RNG
//   state after the step is the one plain decoding reaches after the same
//   tokens. Same seed, same tokens; hence the same distribution.
// - The rejected drafts' positions are rolled back in both pools before
//   anything else runs (HybridKvCache::truncate) and were never offered to
//   the prefix cache.
#include <algorithm>
#include <climits>
#include <string>

#include "engine/kv/hybrid_kv_cache.h"
#include "engine/scheduler/active_request.h"
#include "engine/scheduler/prompt_lookup.h"
#include "engine/scheduler/scheduler.h"

namespace weir {

void Scheduler::planDrafts(std::vector<Planned>& plan) {
    for (Planned& p : plan) p.request->draft.clear();
    if (!opt_.speculative) return;
    const PromptLookupOptions lookup{opt_.draftNgramMax, opt_.draftNgramMin};
    // Only steps with arithmetic to spare (EngineOptions::draftStepRows).
    int32_t rows = 0;
    for (const Planned& p : plan) rows += p.tokens;
    if (rows > opt_.draftStepRows) return;
    // One step verifies at most draftTokens drafts in all. A decode step is
    // bound by reading the weights once while its rows are few; each row past
    // that adds a full pass of arithmetic (the vocabulary-sized output head
    // above all), so drafts for every running request would make a step of
    // four conversations compute-bound and slower than plain decoding. The
    // budget goes first to the requests whose drafts were kept lately (the
    // largest adaptive caps).
    int32_t budget = opt_.draftTokens;
    std::vector<Planned*> order;
    for (Planned& p : plan) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [](const Planned* a, const Planned* b) {
        auto cap = [](const ActiveRequest& r) { return r.draftCap < 0 ? INT32_MAX : r.draftCap; };
        return cap(*a->request) > cap(*b->request);
    });
    for (Planned* planned : order) {
        if (budget <= 0) break;
        Planned& p = *planned;
        ActiveRequest& r = *p.request;
        // Only a decode step (its one token is the last one) that allocated its slot.
        if (r.finished || r.seq < 0 || r.embed || p.tokens != 1 || !r.decoding()) continue;
        if (r.draftPause > 0) {
            --r.draftPause;
            continue;
        }
        if (r.draftCap < 0) r.draftCap = opt_.draftTokens;
        // A verify step may take every draft and one token more: within
        // maxTokens and the context (the step's positions end at computed + 1 + drafts).
        const int32_t room = std::min({r.draftCap, budget, r.maxTokens - r.generated - 1, contextLimit() - r.computed - 1});
        if (room <= 0) continue;
        std::vector<int32_t> draft = proposeDraft(r.tokens, lookup, room);
        // Free pages only: a draft never evicts the prefix cache, preempts, or
        // takes a page admission counted on (everything else was planned first).
        auto fits = [&](size_t n) {
            const kv::StepNeed need = cache_.need(r.seq, int64_t(n));
            return need.fullPages <= cache_.freePages(kv::PoolKind::Full) &&
                   need.windowPages <= cache_.freePages(kv::PoolKind::Window);
        };
        while (!draft.empty() && !fits(draft.size())) draft.pop_back();
        if (draft.empty() || cache_.allocate(r.seq, int64_t(draft.size())) != kv::KvResult::Ok) continue;
        p.tokens += int32_t(draft.size());
        budget -= int32_t(draft.size());
        r.draft = std::move(draft);
    }
}

void Scheduler::verifyDraft(ActiveRequest& r, float* rows, int32_t nVocab) {
    const int32_t base = r.computed;  // the position of tokens.back(), fed at row 0
    const int32_t k = int32_t(r.draft.size());
    r.draftTokens += k;
    draftTokens_ += uint64_t(k);
    const int32_t keptBefore = r.acceptedDraftTokens;
    for (int32_t j = 0; j <= k; ++j) {
        // Row j saw tokens.back() and drafts [0, j), all taken by now.
        r.computed = base + 1 + j;
        const int32_t generated = r.generated;
        const bool goesOn = sampleRow(r, rows + size_t(j) * size_t(nVocab), nVocab);
        const bool kept = j < k && r.generated > generated && r.tokens.back() == r.draft[size_t(j)];
        if (kept) {
            ++r.acceptedDraftTokens;
            ++acceptedDraftTokens_;
        }
        if (!goesOn) return;  // ended: finish() closed the sequence, drafts and all
        if (!kept) break;
    }
    const int32_t kept = r.acceptedDraftTokens - keptBefore;
    if (kept == k) {
        r.draftCap = std::min(opt_.draftTokens, std::max(1, r.draftCap) * 2);
        r.draftMisses = 0;
    } else if (kept > 0) {
        r.draftCap = kept + 1;
        r.draftMisses = 0;
    } else {
        r.draftCap = 1;
        r.draftPause = (1 << std::min(r.draftMisses, 4)) - 1;  // 0, 1, 3, 7, 15 steps
        ++r.draftMisses;
    }
    // Positions from `computed` on hold rejected drafts.
    const kv::KvResult res = cache_.truncate(r.seq, r.computed);
    if (res != kv::KvResult::Ok) {
        const std::string what = "request " + std::to_string(r.id) + " could not roll back its rejected drafts to " +
                                 std::to_string(r.computed) + " tokens (" + kv::kvResultName(res) + ")";
        recordViolation(what);
        r.error = ErrorCode::Internal;
        finish(r, Event::Kind::Error, FinishReason::Stop, "internal error: " + what + "; see the integrity log");
    }
}

} // namespace weir
