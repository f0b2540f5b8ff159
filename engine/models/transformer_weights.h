#pragma once
// Binds a GGUF's tensors to TransformerWeights by their llama.cpp names
// ("token_embd.weight", "blk.N.attn_q.weight", ...), checking every shape.
// Architectures differ only in which tensors they must, may or must not have;
// TensorSet says which, so Gemma 3 and the Llama family share one binding.
#include "engine/models/model_tensors.h"
#include "engine/models/transformer.h"
#include "weir/types/model_config.h"

namespace weir {

enum class Presence { Absent, Optional, Required };

struct TensorSet {
    Presence qkNorms = Presence::Absent;     // attn_q_norm / attn_k_norm (both or neither)
    Presence biases = Presence::Absent;      // attn_q/k/v/output.bias (each on its own)
    Presence postNorms = Presence::Absent;   // post_attention_norm / post_ffw_norm
    Presence ropeFreqs = Presence::Absent;   // rope_freqs.weight
};

// Throws weir::Error naming the first missing or mis-shaped tensor. The output
// head is token_embd when the file has no output.weight (tied embeddings).
TransformerWeights bindTransformerWeights(const std::string& path, const ModelConfig& c, ModelTensors& t,
                                          const TensorSet& set);

} // namespace weir
