#pragma once
// A small random model GGUF (llama, qwen2 or gemma3 architecture) for tests and
// reference runs: random weights in several quantized types (Q8_0, Q4_K, Q6_K,
// F16) and a tiny SentencePiece-style vocabulary, so llama.cpp loads it too. The bytes depend
// only on the spec (own PRNG, no std distributions), so every build writes the
// same file.
#include <cstdint>
#include <string>
#include <vector>

#include "weir/types/synthetic_model_spec.h"

namespace weir {

// The complete file.
std::vector<uint8_t> makeSyntheticModel(const SyntheticModelSpec& spec);
// Writes it to `path`; throws weir::Error on a bad spec or I/O failure.
void writeSyntheticModel(const SyntheticModelSpec& spec, const std::string& path);

} // namespace weir
