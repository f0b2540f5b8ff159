#pragma once
// One exception type for load-time and input errors (bad GGUF, unsupported
// architecture, bad arguments). Hot paths (scheduler, allocator) never throw:
// they return status values instead.
#include <stdexcept>
#include <string>

namespace weir {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
};

} // namespace weir
