#pragma once
// The two real models the grammar tests run on; SmolLM2's set-up copy is
// optional (tests skip without it).
#include <cstdlib>
#include <string>
#include <vector>

namespace weir::test {

inline std::string grammarTestSourceDir() {
    const char* d = std::getenv("WEIR_SOURCE_DIR");
    return d ? d : ".";
}

struct RealModel {
    std::string name, path;
};

inline std::vector<RealModel> realModels() {
    const char* m = std::getenv("WEIR_MODEL");
    return {{"gemma3-270m", m ? m : grammarTestSourceDir() + "/models/gemma-3-270m-q4_k_m.gguf"},
            {"smollm2-135m", grammarTestSourceDir() + "/models/smollm2-135m-instruct-q4_1.gguf"}};
}

} // namespace weir::test
