#include "engine/scheduler/prefill_share.h"

#include <algorithm>
#include <vector>

namespace weir {

int32_t fairPrefillShare(std::span<const int32_t> demands, int32_t budget) {
    if (demands.empty() || budget <= 0) return 0;
    std::vector<int32_t> sorted(demands.begin(), demands.end());
    std::sort(sorted.begin(), sorted.end());
    int64_t left = budget;
    for (size_t i = 0; i < sorted.size(); ++i) {
        const int64_t others = int64_t(sorted.size() - i);
        const int64_t d = std::max<int32_t>(sorted[i], 1);
        // Everyone still unserved asks for at least d: if d each fits, the
        // smallest is served whole and the rest share what is left.
        if (d * others <= left) {
            left -= d;
            continue;
        }
        return int32_t(std::max<int64_t>(1, left / others));
    }
    return std::max<int32_t>(sorted.back(), 1);
}

} // namespace weir
