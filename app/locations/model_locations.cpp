#include "app/locations/model_locations.h"

#include <cstdlib>
#include <system_error>

namespace weir::locations {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

bool isFile(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

} // namespace

fs::path xdgDataHome() {
    // The spec: a relative value is invalid and must be ignored.
    if (const std::string xdg = env("XDG_DATA_HOME"); !xdg.empty() && fs::path(xdg).is_absolute()) return xdg;
    const std::string home = env("HOME");
    return fs::path(home.empty() ? "/" : home) / ".local" / "share";
}

fs::path userDataDir() { return xdgDataHome() / "weir"; }

std::vector<fs::path> modelSearchDirs() {
    std::vector<fs::path> dirs{userDataDir() / "models"};
    const fs::path built = fs::path(WEIR_DEFAULT_MODEL).parent_path();
    if (!built.empty() && built.lexically_normal() != dirs[0].lexically_normal()) dirs.push_back(built);
    return dirs;
}

std::string findModel(const std::string& fileName) {
    if (fileName.empty()) return {};
    for (const fs::path& dir : modelSearchDirs())
        if (isFile(dir / fileName)) return (dir / fileName).string();
    return {};
}

std::string defaultModelPath() {
    if (std::string m = env("WEIR_MODEL"); !m.empty()) return m;
    if (std::string found = findModel(fs::path(WEIR_DEFAULT_MODEL).filename().string()); !found.empty()) return found;
    return WEIR_DEFAULT_MODEL;
}

std::string appModelPath() {
    if (std::string m = env("WEIR_MODEL"); !m.empty()) return m;
    if (std::string found = findModel(WEIR_CHAT_MODEL_FILE); !found.empty()) return found;
    return defaultModelPath();
}

} // namespace weir::locations
