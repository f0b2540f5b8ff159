#include "engine/models/model_assembly.h"

namespace weir {

AssembledModel assembleModel(const std::string& path, const BackendRequest& request, const LoadProgress& progress) {
    AssembledModel a;
    a.file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
    a.backend = createBackend(request);
    a.model = loadModel(a.file, *a.backend, progress);
    return a;
}

std::unique_ptr<kv::HybridKvCache> assembleCache(kv::KvCacheConfig config, Model& model) {
    config.memory = &model.backend();
    return std::make_unique<kv::HybridKvCache>(config);
}

} // namespace weir
