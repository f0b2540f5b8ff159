// syntheticModelPresets: the full-size presets weir-cli make-synthetic
// --preset writes (engine/models/synthetic_presets.h).
#include "engine/models/synthetic_presets.h"
#include "weir/model_file.h"

namespace weir {

std::vector<SyntheticPresetInfo> syntheticModelPresets() {
    std::vector<SyntheticPresetInfo> out;
    for (const SyntheticPresetName& n : syntheticPresetNames()) out.push_back({n.name, n.description});
    return out;
}

} // namespace weir
