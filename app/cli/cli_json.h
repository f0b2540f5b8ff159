#pragma once
// Tiny helpers for the JSON that weir-cli subcommands print.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "weir/base/json_string.h"

namespace weir::cli {

using weir::jsonString;

inline std::string jsonIntArray(const std::vector<int32_t>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
    return out + "]";
}

inline std::string jsonNumber(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

} // namespace weir::cli
