#pragma once
// The devices this machine offers the engine: the CPU always, then each CUDA
// GPU when the CUDA module (libweir-cuda.so), a driver and a device are there.
#include <string>
#include <vector>

#include "weir/types/compute_device.h"

namespace weir {

// `cudaProblem` (may be null) receives why no GPU is listed ("no CUDA
// device", "the CUDA module ... is not available: ...") when none is.
std::vector<ComputeDevice> listComputeDevices(std::string* cudaProblem = nullptr);

// Throws weir::Error when `device` is not a --device value (cpu, cuda, cuda:N, or empty).
void checkDeviceName(const std::string& device);

} // namespace weir
