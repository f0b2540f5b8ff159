#pragma once
// The kinds of op a step profile (weir/step_profile.h) times apart.
namespace weir {

enum class StepOp : int {
    Embed,
    Norms,         // RMS norms, residual adds, biases, a separate activation
    Projections,   // every matmul but the output head (q/k/v with the head norms, RoPE and K/V rows
                   // into the cache, output, gate/up with the activation, down)
    RopeAndStore,  // head norms, RoPE, K/V rows into the cache as an op of their own (after q/k/v biases)
    Attention,
    OutputHead,
    Gather,        // rows that want logits moved together
    Count
};
constexpr int kStepOps = int(StepOp::Count);

} // namespace weir
