#pragma once
// The parts of ModelConfig every architecture reads the same way from
// "<arch>.*" metadata; the per-architecture loaders fill in the rest
// (RoPE style and bases, sliding layers, attention scale).
#include <string>

#include "engine/gguf/gguf_file.h"
#include "weir/types/model_config.h"
#include "engine/models/model_metadata.h"

namespace weir {

// Sizes, norm epsilon, RoPE dimensions, vocabulary (from token_embd), parameter
// count and quantization name. Throws weir::Error for missing or inconsistent keys.
ModelConfig readBaseConfig(const gguf::GgufFile& file, const ModelMetadata& meta, float defaultEps);

// Linear RoPE scaling from rope.scaling.type/factor (or the older rope.scale_linear):
// returns the frequency scale (1 when unscaled). Other scaling types are refused.
float readLinearRopeScale(const gguf::GgufFile& file, const ModelMetadata& meta);

// Final consistency checks once the architecture filled its part, including
// that block_count matches the blk.N tensors the file holds.
void checkConfig(const gguf::GgufFile& file, const ModelConfig& c);

} // namespace weir
