#pragma once
// Where Weir keeps a user's files, the way the XDG base directory spec says:
//   data    $XDG_DATA_HOME/weir (~/.local/share/weir): conversations, settings, logs
//   models  $XDG_DATA_HOME/weir/models, then the build folder's models/
//           (the folder of WEIR_DEFAULT_MODEL, for a development build)
// An installed Weir finds the models a user put in the first; a build tree
// finds the ones packaging/setup.sh put in the second.
#include <filesystem>
#include <string>
#include <vector>

namespace weir::locations {

// $XDG_DATA_HOME, or ~/.local/share when it is unset, empty or relative.
std::filesystem::path xdgDataHome();
// xdgDataHome()/weir
std::filesystem::path userDataDir();
// The folders searched for models, in order, without duplicates.
std::vector<std::filesystem::path> modelSearchDirs();
// $WEIR_MODEL when set; else the default model's file name in the first
// search folder that has it; else the path the build was configured with
// (which may not exist: the caller's load reports that).
std::string defaultModelPath();
// The model the desktop app opens when the user has not chosen one:
// $WEIR_MODEL when set; else the chat model (WEIR_CHAT_MODEL_FILE, an
// instruction-tuned model) where a search folder has it; else
// defaultModelPath() (a base model: it continues text rather than answering).
std::string appModelPath();
// Where a model named `fileName` is found in the search folders ("" if none).
std::string findModel(const std::string& fileName);

} // namespace weir::locations
