#pragma once
// A small random Llama-architecture GGUF for tests and reference runs: random
// weights in several quantized types (Q8_0, Q4_K, Q6_K, F16) and a tiny
// SentencePiece-style vocabulary, so llama.cpp loads it too. The bytes depend
// only on the spec (own PRNG, no std distributions), so every build writes the
// same file.
#include <cstdint>
#include <string>
#include <vector>

namespace weir {

struct SyntheticLlamaSpec {
    std::string architecture = "llama";   // "llama" (normal RoPE) or "qwen2" (NeoX, q/k/v biases)
    int32_t nLayer = 2;
    int32_t nEmbd = 256;                  // multiple of 256 (K-quant rows)
    int32_t nFf = 512;                    // multiple of 256
    int32_t nHead = 4;
    int32_t nHeadKv = 2;
    int32_t nVocab = 512;                 // >= 300: 3 specials + 256 byte tokens + pieces
    int32_t nCtx = 1024;
    float ropeBase = 10000.0f;
    uint64_t seed = 1;
};

// The complete file.
std::vector<uint8_t> makeSyntheticLlama(const SyntheticLlamaSpec& spec);
// Writes it to `path`; throws weir::Error on a bad spec or I/O failure.
void writeSyntheticLlama(const SyntheticLlamaSpec& spec, const std::string& path);

} // namespace weir
