#pragma once
// Per-architecture loaders behind loadModel() (model_factory.cpp).
#include <memory>

#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"

namespace weir {

// "gemma3": Gemma 3 (sliding-window layers, Q/K norms, pre and post norms, GeGLU).
std::unique_ptr<Model> loadGemma3(std::shared_ptr<const gguf::GgufFile> file, Backend& backend,
                                  const LoadProgress& progress);
// "llama", "qwen2", "qwen3": Llama 2/3, Mistral, Qwen 2/3 (SwiGLU; optional
// q/k/v biases and Q/K norms).
std::unique_ptr<Model> loadLlama(std::shared_ptr<const gguf::GgufFile> file, Backend& backend,
                                 const LoadProgress& progress);

} // namespace weir
