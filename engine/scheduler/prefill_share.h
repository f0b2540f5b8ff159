#pragma once
// How one step's prefill budget (--prefill-chunk tokens) is shared among the
// requests that want to prefill, so several long prompts start together and a
// short prompt behind a long one is not kept waiting for all of it (as vLLM's
// and SGLang's per-step token budgets do). Max-min fair: every request gets
// min(its demand, T), with T the largest cap whose total fits the budget;
// requests asking for less than T leave the rest to the others.
#include <cstdint>
#include <span>

namespace weir {

// The cap T for `demands` (tokens each request still has to prefill, all >= 1)
// and a budget of `budget` tokens: sum(min(demand, T)) <= budget, T >= 1, and
// T is the largest such value (the largest demand when everything fits).
// Returns 0 when there are no demands or no budget.
int32_t fairPrefillShare(std::span<const int32_t> demands, int32_t budget);

} // namespace weir
