#include "kernels/cpu/longest_first.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <stdexcept>

namespace weir::kernels {

void LongestFirst::deal(std::span<const int64_t> costs, int64_t jobs) {
    if (jobs < 1) throw std::invalid_argument("LongestFirst::deal: jobs must be at least 1");
    const size_t n = costs.size();
    byCost_.resize(n);
    std::iota(byCost_.begin(), byCost_.end(), 0);
    std::sort(byCost_.begin(), byCost_.end(), [&](int32_t a, int32_t b) {
        return costs[size_t(a)] != costs[size_t(b)] ? costs[size_t(a)] > costs[size_t(b)] : a < b;
    });

    loads_.assign(size_t(jobs), 0);
    heap_.clear();
    for (int64_t j = 0; j < jobs; ++j) heap_.push_back({0, int32_t(j)});
    // A min-heap on (load, job): the least loaded job, the lower one on a tie.
    const auto later = std::greater<std::pair<int64_t, int32_t>>();
    std::make_heap(heap_.begin(), heap_.end(), later);
    jobOf_.resize(n);
    for (const int32_t item : byCost_) {
        std::pop_heap(heap_.begin(), heap_.end(), later);
        auto& least = heap_.back();
        jobOf_[size_t(item)] = least.second;
        least.first += costs[size_t(item)];
        loads_[size_t(least.second)] = least.first;
        std::push_heap(heap_.begin(), heap_.end(), later);
    }

    // Group by job, items ascending within each (a counting sort).
    starts_.assign(size_t(jobs) + 1, 0);
    for (size_t i = 0; i < n; ++i) ++starts_[size_t(jobOf_[i]) + 1];
    for (int64_t j = 0; j < jobs; ++j) starts_[size_t(j) + 1] += starts_[size_t(j)];
    order_.resize(n);
    std::vector<int32_t>& fill = byCost_;  // reused as each job's next slot
    fill.assign(starts_.begin(), starts_.end() - 1);
    for (size_t i = 0; i < n; ++i) order_[size_t(fill[size_t(jobOf_[i])]++)] = int32_t(i);
}

} // namespace weir::kernels
