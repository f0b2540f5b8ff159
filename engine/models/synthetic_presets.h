#pragma once
// Full-size synthetic models: a real model's architecture metadata, tensor
// names, shapes and types and vocabulary size, with tame weights
// (synthetic_weights.h) and a SentencePiece-style vocabulary both Weir and
// llama.cpp load. They run at the real model's speed in either engine, so
// a benchmark machine can make one where a real model file cannot travel
// (weir-cli make-synthetic --preset NAME).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "weir/base/ggml_type.h"

namespace weir {

struct SyntheticPresetTensor {
    std::string name;
    GgmlType type = GgmlType::F32;
    std::vector<int64_t> ne;   // innermost first
    double scale = 1.0;        // F32: every value; else the values' standard deviation
};

struct SyntheticPreset {
    std::string name;
    std::string description;
    std::vector<gguf::KeyValue> metadata;  // in file order, the tokenizer's included
    std::vector<SyntheticPresetTensor> tensors;
};

struct SyntheticPresetName {
    const char* name;
    const char* description;
};
// Every preset, in the order `--preset list` shows them.
const std::vector<SyntheticPresetName>& syntheticPresetNames();

// The preset called `name`; throws weir::Error listing the presets when there is none.
SyntheticPreset syntheticPreset(const std::string& name);

} // namespace weir
