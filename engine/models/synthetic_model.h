#pragma once
// A small random model GGUF (llama, qwen2 or gemma3 architecture) for tests and
// reference runs, or a full-size preset (synthetic_presets.h). The small one
// has random weights in several quantized types (Q8_0, Q4_K, Q6_K, F16) and a
// tiny SentencePiece-style vocabulary, so llama.cpp loads it too. The bytes
// depend only on the spec (own PRNG, no std distributions), so every build
// writes the same file.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/gguf/gguf_writer.h"
#include "engine/models/synthetic_presets.h"
#include "weir/types/synthetic_model_spec.h"

namespace weir {

// A full-size preset as a writer whose tensors are filled (tame weights
// from `seed`) while the file is written.
gguf::GgufWriter syntheticPresetWriter(const SyntheticPreset& preset, uint64_t seed);

// The complete file (in memory: use writeSyntheticModel for a large preset).
std::vector<uint8_t> makeSyntheticModel(const SyntheticModelSpec& spec);
// Writes it to `path`; throws weir::Error on a bad spec or I/O failure.
void writeSyntheticModel(const SyntheticModelSpec& spec, const std::string& path);

} // namespace weir
