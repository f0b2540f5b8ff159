#pragma once
// Picks and builds the backend a model runs on from the --device setting:
// "cpu", "cuda" (the first GPU), "cuda:N", or "" (the first GPU when the CUDA
// module and a device are there, else the CPU). A device asked for by name
// that is not there is an error naming what is, never a silent fallback.
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/backend.h"

namespace weir {

struct BackendRequest {
    std::string device;          // as EngineOptions::device
    int32_t threads = 0;         // CPU threads (0 = every hardware thread)
    bool repackWeights = true;   // CPU: repack the output head
    bool cudaGraphs = true;      // CUDA: replay decode steps as graphs
};

// The request of an engine or a runner with these options.
inline BackendRequest backendRequestFor(const std::string& device, int32_t threads, bool repackWeights) {
    BackendRequest r;
    r.device = device;
    r.threads = threads;
    r.repackWeights = repackWeights;
    return r;
}

// What a --device value names. Throws weir::Error for a malformed one.
struct DeviceChoice {
    bool automatic = false;
    DeviceKind kind = DeviceKind::Cpu;
    int32_t index = 0;
};
DeviceChoice parseDevice(const std::string& device);

std::unique_ptr<Backend> createBackend(const BackendRequest& request);

// The CPU and every CUDA device, in that order; `cudaProblem` (may be null)
// receives why there is none when the list holds only the CPU.
std::vector<DeviceInfo> listDevices(std::string* cudaProblem = nullptr);

// "cpu" or "cuda:N": the name --device takes for a device.
std::string deviceName(const DeviceInfo& device);

} // namespace weir
