#pragma once
// Substring checks for assertions on messages and rendered text.
#include <string_view>

namespace weirtest {

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }
inline bool startsWith(std::string_view text, std::string_view prefix) { return text.starts_with(prefix); }
inline bool endsWith(std::string_view text, std::string_view suffix) { return text.ends_with(suffix); }

} // namespace weirtest
