// loadModel(): picks the architecture from general.architecture.
#include "engine/models/architectures.h"
#include "weir/base/error.h"

namespace weir {

std::unique_ptr<Model> loadModel(std::shared_ptr<const gguf::GgufFile> file, Backend& backend, const LoadProgress& progress) {
    if (!file) throw Error("loadModel: no file");
    const auto arch = file->getString("general.architecture");
    if (!arch) throw Error(file->path() + ": missing metadata key general.architecture");
    if (*arch == "gemma3") return loadGemma3(std::move(file), backend, progress);
    if (*arch == "llama" || *arch == "qwen2" || *arch == "qwen3") return loadLlama(std::move(file), backend, progress);
    throw Error(file->path() + ": unsupported architecture '" + *arch + "' (supported: gemma3, llama, qwen2, qwen3)");
}

} // namespace weir
