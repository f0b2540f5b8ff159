#pragma once
// The entry points of the CUDA backend module (libweir-cuda.so), which the
// engine opens at run time with dlopen (cuda_module.h) so that weir, weir-cli
// and the package start on machines without CUDA libraries. Both sides are
// built from this tree by one compiler; the version below changes whenever
// the Backend interface or these signatures do, and a module of another
// version is refused by name.
#include <cstddef>
#include <cstdint>

#include "engine/backend/backend.h"

namespace weir {

inline constexpr int32_t kCudaModuleAbi = 5;

struct CudaBackendOptions {
    int32_t device = 0;        // CUDA ordinal
    bool graphs = true;        // replay decode steps as CUDA graphs keyed by batch shape
};

} // namespace weir

extern "C" {
// kCudaModuleAbi of the module's build.
int32_t weir_cuda_module_abi();
// Number of CUDA devices, or -1 with a message in err (no driver, driver too old...).
int32_t weir_cuda_device_count(char* err, size_t errBytes);
// Facts of device `index` (kind Cuda; name, memory, detail). False with a message in err.
bool weir_cuda_device_info(int32_t index, weir::DeviceInfo* out, char* err, size_t errBytes);
// A backend on options->device, or nullptr with a message in err. The caller
// deletes it (virtual destructor) before closing the module.
weir::Backend* weir_cuda_create_backend(const weir::CudaBackendOptions* options, char* err, size_t errBytes);
}
