#pragma once
// What a synthetic model GGUF is made of (weir-cli make-synthetic and the
// reference tests write one; see writeSyntheticModel in weir/model_file.h):
// a small random model from the sizes below, or a full-size preset.
#include <cstdint>
#include <string>

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
    // A full-size preset (syntheticModelPresets() in weir/model_file.h): a
    // real model's metadata, tensor table and vocabulary size with tame
    // weights from `seed`. When set, the fields above but seed are ignored.
    std::string preset;
};

} // namespace weir
