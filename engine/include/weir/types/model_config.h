#pragma once
// Hyper-parameters read from GGUF metadata, common to every architecture.
#include <cstdint>
#include <string>
#include <vector>

namespace weir {

enum class RopeStyle : uint8_t { Normal, NeoX };  // Normal: adjacent pairs (Llama); NeoX: halves

struct ModelConfig {
    std::string architecture;       // "gemma3", "llama", "qwen2", ...
    std::string name;               // general.name
    int32_t nLayer = 0, nEmbd = 0, nFf = 0, nHead = 0, nHeadKv = 0;
    int32_t headDimK = 0, headDimV = 0, nVocab = 0, nCtxTrain = 0;
    float normEps = 1e-6f;
    RopeStyle ropeStyle = RopeStyle::NeoX;
    int32_t nRot = 0;
    std::vector<float> ropeBase;    // per layer
    std::vector<float> ropeScale;   // per layer frequency scale (1 / linear factor)
    int32_t slidingWindow = 0;      // 0 = none
    std::vector<bool> layerSlides;  // per layer: true for sliding-window layers
    float attnScale = 0.0f;         // multiplier applied to q
    uint64_t parameterCount = 0;
    std::string quantization;       // e.g. "Q4_K_M" or most common tensor type

    bool anySliding() const {
        for (bool b : layerSlides) if (b) return true;
        return false;
    }
    int64_t kvRowElems() const { return int64_t(nHeadKv) * headDimK; }
};

} // namespace weir
