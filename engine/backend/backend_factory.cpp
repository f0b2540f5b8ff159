#include "engine/backend/backend_factory.h"

#include <charconv>

#include "engine/backend/cpu_backend.h"
#include "engine/backend/cuda_module.h"
#include "weir/base/error.h"
#include "weir/types/engine_limits.h"

namespace weir {

DeviceChoice parseDevice(const std::string& device) {
    DeviceChoice c;
    if (device.empty() || device == "auto") {
        c.automatic = true;
        return c;
    }
    if (device == "cpu") return c;
    if (device == "cuda" || device == "gpu") {
        c.kind = DeviceKind::Cuda;
        return c;
    }
    if (device.rfind("cuda:", 0) == 0) {
        const char* b = device.data() + 5;
        const char* e = device.data() + device.size();
        int32_t index = -1;
        auto [end, ec] = std::from_chars(b, e, index);
        if (ec == std::errc() && end == e && b != e && index >= 0) {
            c.kind = DeviceKind::Cuda;
            c.index = index;
            return c;
        }
    }
    throw Error("--device '" + device + "': expected cpu, cuda or cuda:N (N = 0, 1, ...)");
}

std::string deviceName(const DeviceInfo& device) {
    return device.kind == DeviceKind::Cpu ? std::string("cpu") : "cuda:" + std::to_string(device.index);
}

std::vector<DeviceInfo> listDevices(std::string* cudaProblem) {
    std::vector<DeviceInfo> out;
    DeviceInfo cpu = CpuBackend::hostDevice();
    cpu.detail = std::to_string(EngineLimits::physicalCores()) + " physical cores";  // what --threads 0 uses
    out.push_back(std::move(cpu));
    CudaModule& cuda = CudaModule::instance();
    std::vector<DeviceInfo> gpus = cuda.devices();
    if (gpus.empty() && cudaProblem) *cudaProblem = cuda.problem();
    for (DeviceInfo& d : gpus) out.push_back(std::move(d));
    return out;
}

std::unique_ptr<Backend> createBackend(const BackendRequest& request) {
    const DeviceChoice choice = parseDevice(request.device);
    CpuBackendOptions cpu;
    cpu.threads = request.threads;
    cpu.repackWeights = request.repackWeights;
    if (choice.automatic) {
        CudaModule& cuda = CudaModule::instance();
        if (cuda.loaded() && !cuda.devices().empty()) {
            CudaBackendOptions o;
            o.device = 0;
            o.graphs = request.cudaGraphs;
            return cuda.createBackend(o);
        }
        return std::make_unique<CpuBackend>(cpu);
    }
    if (choice.kind == DeviceKind::Cpu) return std::make_unique<CpuBackend>(cpu);

    CudaModule& cuda = CudaModule::instance();
    const std::string asked = "--device " + request.device;
    if (!cuda.loaded()) throw Error(asked + ": " + cuda.problem());
    const std::vector<DeviceInfo> gpus = cuda.devices();
    if (gpus.empty()) throw Error(asked + ": " + cuda.problem());
    if (choice.index >= int32_t(gpus.size())) {
        std::string have;
        for (const DeviceInfo& d : gpus) have += (have.empty() ? "" : ", ") + deviceName(d) + " (" + d.name + ")";
        throw Error(asked + ": no such device; this machine has " + have);
    }
    CudaBackendOptions o;
    o.device = choice.index;
    o.graphs = request.cudaGraphs;
    return cuda.createBackend(o);
}

} // namespace weir
