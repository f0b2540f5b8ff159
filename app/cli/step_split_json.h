#pragma once
// The "step split" object of weir-cli bench and bench-concurrency: where the
// wall time of `steps` profiled steps went (weir/step_profile.h), per step.
#include <cstdint>
#include <string>

#include "weir/step_profile.h"

namespace weir::cli {

// `d`: the profile's change over the steps; `wallSeconds`: their wall time
// as the benchmark measured it (sampling and scheduling included).
std::string stepSplitJson(const StepProfile& d, double wallSeconds, uint64_t steps);

} // namespace weir::cli
