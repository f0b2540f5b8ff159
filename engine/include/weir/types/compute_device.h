#pragma once
// A device the engine can run a model on, as the app's Device setting, the
// pool monitor and `weir-cli devices` show it.
#include <cstdint>
#include <string>

namespace weir {

struct ComputeDevice {
    std::string id;              // what --device takes: "cpu", "cuda:0", ...
    bool gpu = false;
    std::string name;            // "NVIDIA H200", or the CPU's brand
    uint64_t totalBytes = 0;     // its memory (RAM for the CPU)
    uint64_t freeBytes = 0;      // of it, free when asked (RAM: available without swapping)
    std::string detail;          // "compute 9.0, CUDA 13.0" / "16 threads"
};

} // namespace weir
