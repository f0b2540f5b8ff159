// A stand-in for libweir-cuda.so with the module's entry points, for the
// loader's tests on machines without CUDA: it reports the ABI in
// $WEIR_FAKE_CUDA_ABI (this build's when unset) and a driver that fails
// the way an old or missing one does.
#include <cstdio>
#include <cstdlib>

#include "engine/backend/cuda_module_abi.h"

extern "C" {

__attribute__((visibility("default"))) int32_t weir_cuda_module_abi() {
    const char* abi = std::getenv("WEIR_FAKE_CUDA_ABI");
    return abi && *abi ? int32_t(std::atoi(abi)) : weir::kCudaModuleAbi;
}

__attribute__((visibility("default"))) int32_t weir_cuda_device_count(char* err, size_t errBytes) {
    std::snprintf(err, errBytes, "CUDA driver version is insufficient for CUDA runtime version (fake module)");
    return -1;
}

__attribute__((visibility("default"))) bool weir_cuda_device_info(int32_t, weir::DeviceInfo*, char* err, size_t errBytes) {
    std::snprintf(err, errBytes, "no device (fake module)");
    return false;
}

__attribute__((visibility("default"))) weir::Backend* weir_cuda_create_backend(const weir::CudaBackendOptions*, char* err,
                                                                              size_t errBytes) {
    std::snprintf(err, errBytes, "CUDA driver version is insufficient for CUDA runtime version (fake module)");
    return nullptr;
}
}
