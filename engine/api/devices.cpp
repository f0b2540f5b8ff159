#include "weir/devices.h"

#include "engine/api/device_description.h"
#include "engine/backend/backend_factory.h"

namespace weir {

ComputeDevice toComputeDevice(const DeviceInfo& d) {
    ComputeDevice c;
    c.id = deviceName(d);
    c.gpu = d.kind != DeviceKind::Cpu;
    c.name = d.name;
    c.totalBytes = d.totalBytes;
    c.freeBytes = d.freeBytes;
    c.detail = d.detail;
    return c;
}

std::vector<ComputeDevice> listComputeDevices(std::string* cudaProblem) {
    std::vector<ComputeDevice> out;
    for (const DeviceInfo& d : listDevices(cudaProblem)) out.push_back(toComputeDevice(d));
    return out;
}

void checkDeviceName(const std::string& device) { parseDevice(device); }

} // namespace weir
