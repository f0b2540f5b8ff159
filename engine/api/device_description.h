#pragma once
// A backend's DeviceInfo as the public ComputeDevice (engine/api only).
#include "engine/backend/backend.h"
#include "weir/types/compute_device.h"

namespace weir {

ComputeDevice toComputeDevice(const DeviceInfo& device);

} // namespace weir
