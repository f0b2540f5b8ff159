#pragma once
// Opens the CUDA backend module (libweir-cuda.so) at run time. The engine
// links no CUDA library: on a machine without the module, the driver or a
// device, the module simply reports why, and the CPU stays available.
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/cuda_module_abi.h"

namespace weir {

class CudaModule {
public:
    // The process-wide module, opened on first use (never closed: backends
    // it made may live until exit). Never throws.
    static CudaModule& instance();

    // Whether the module was found, opened and is of this build's ABI.
    bool loaded() const { return loaded_; }
    // Why it is not usable ("libweir-cuda.so not found next to weir-cli or
    // in the library path", "module ABI 2, this build wants 1", the driver's
    // error...); empty when devices() can be asked.
    const std::string& problem() const { return problem_; }
    // Where it was opened from.
    const std::string& path() const { return path_; }

    // Every CUDA device (empty with problem() set when there are none).
    std::vector<DeviceInfo> devices();
    // A backend on device `index`; throws weir::Error saying why not.
    std::unique_ptr<Backend> createBackend(const CudaBackendOptions& options);

private:
    CudaModule();
    bool loaded_ = false;
    std::string problem_, path_;
    decltype(&weir_cuda_device_count) deviceCount_ = nullptr;
    decltype(&weir_cuda_device_info) deviceInfo_ = nullptr;
    decltype(&weir_cuda_create_backend) create_ = nullptr;
};

// Candidate paths of the module, most specific first: $WEIR_CUDA_MODULE,
// then next to the running executable (../lib/ of build/bin and of an
// installed /usr/bin, and ../lib/weir/), then the bare name for the loader's
// own search path.
std::vector<std::string> cudaModuleCandidates();

} // namespace weir
