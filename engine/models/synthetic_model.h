#pragma once
// A small random model GGUF (llama, qwen2 or gemma3 architecture) for tests and
// reference runs: random weights in several quantized types (Q8_0, Q4_K, Q6_K,
// F16) and a tiny SentencePiece-style vocabulary, so llama.cpp loads it too. The bytes depend
// only on the spec (own PRNG, no std distributions), so every build writes the
// same file.
#include <cstdint>
#include <string>
#include <vector>

namespace weir {

struct SyntheticModelSpec {
    // "llama" (normal RoPE), "qwen2" (NeoX, q/k/v biases) or "gemma3" (sliding
    // window, Q/K norms, post norms, GeGLU, tied output).
    std::string architecture = "llama";
    int32_t nLayer = 2;
    int32_t nEmbd = 256;                  // multiple of 256 (K-quant rows)
    int32_t nFf = 512;                    // multiple of 256
    int32_t nHead = 4;
    int32_t nHeadKv = 2;
    int32_t nVocab = 512;                 // >= 300: 3 specials + 256 byte tokens + pieces
    int32_t nCtx = 1024;
    float ropeBase = 10000.0f;
    int32_t slidingWindow = 16;           // gemma3: window of the sliding layers
    int32_t slidingPattern = 3;           // gemma3: every 3rd layer is global
    uint64_t seed = 1;
};

// The complete file.
std::vector<uint8_t> makeSyntheticModel(const SyntheticModelSpec& spec);
// Writes it to `path`; throws weir::Error on a bad spec or I/O failure.
void writeSyntheticModel(const SyntheticModelSpec& spec, const std::string& path);

} // namespace weir
