#pragma once
// Items of known, unequal cost dealt to a fixed number of jobs, the costliest
// first, each to the job with the least work so far (the classic
// longest-processing-time rule). A prompt's attention tiles cost in
// proportion to the keys their tokens see, which grows along the prompt;
// cutting the tiles' running sum into equal ranges leaves a job up to one
// whole tile above its share, and a late tile of a 512-token prompt is half
// a share at 16 threads (the busiest job ran 1.26x the mean). Dealt longest
// first, the busiest job is within a small tile of the mean.
//
// Deterministic: ties go to the lower item, then the lower job, so the same
// costs give the same deal on every call. Within a job the items keep their
// original order (neighbouring tiles read neighbouring keys).
#include <cstdint>
#include <span>
#include <vector>

namespace weir::kernels {

class LongestFirst {
public:
    // Deals items [0, costs.size()) to `jobs` jobs (at least 1). Costs are
    // non-negative.
    void deal(std::span<const int64_t> costs, int64_t jobs);

    int64_t jobs() const { return int64_t(starts_.size()) - 1; }
    // The items of job j, in ascending order.
    std::span<const int32_t> items(int64_t j) const {
        return {order_.data() + starts_[size_t(j)], size_t(starts_[size_t(j) + 1] - starts_[size_t(j)])};
    }
    // The summed cost of job j's items.
    int64_t load(int64_t j) const { return loads_[size_t(j)]; }

private:
    std::vector<int32_t> byCost_;  // items, costliest first
    std::vector<int32_t> jobOf_;   // per item
    std::vector<int64_t> loads_;   // per job
    std::vector<int32_t> order_;   // items grouped by job
    std::vector<int32_t> starts_;  // job j's items: order_[starts_[j], starts_[j + 1])
    std::vector<std::pair<int64_t, int32_t>> heap_;  // (load, job), least first
};

} // namespace weir::kernels
