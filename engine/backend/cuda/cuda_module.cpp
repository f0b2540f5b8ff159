// The extern "C" entry points of the CUDA module (cuda_module_abi.h). Nothing
// may leave them as an exception: every failure becomes a message in `err`.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda_module_abi.h"

namespace {

void writeError(char* err, size_t errBytes, const std::string& message) {
    if (!err || errBytes == 0) return;
    const size_t n = std::min(message.size(), errBytes - 1);
    std::memcpy(err, message.data(), n);
    err[n] = '\0';
}

// The runtime's word for why no device can be used, in plain terms.
std::string deviceError(cudaError_t e) {
    switch (e) {
    case cudaErrorNoDevice: return "no CUDA device";
    case cudaErrorInsufficientDriver:
        return std::string("no usable NVIDIA driver (missing, or older than this CUDA runtime): ") + cudaGetErrorString(e);
    default: return std::string("CUDA: ") + cudaGetErrorString(e);
    }
}

} // namespace

#pragma GCC visibility push(default)
extern "C" {

int32_t weir_cuda_module_abi() { return weir::kCudaModuleAbi; }

int32_t weir_cuda_device_count(char* err, size_t errBytes) {
    try {
        int count = 0;
        const cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess) {
            cudaGetLastError();
            writeError(err, errBytes, deviceError(e));
            return e == cudaErrorNoDevice ? 0 : -1;
        }
        if (count == 0) writeError(err, errBytes, "no CUDA device");
        return count;
    } catch (const std::exception& ex) {
        writeError(err, errBytes, ex.what());
    } catch (...) {
        writeError(err, errBytes, "CUDA: unknown error");
    }
    return -1;
}

bool weir_cuda_device_info(int32_t index, weir::DeviceInfo* out, char* err, size_t errBytes) {
    try {
        if (!out) {
            writeError(err, errBytes, "weir_cuda_device_info: no output");
            return false;
        }
        int count = 0;
        const cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess) {
            cudaGetLastError();
            writeError(err, errBytes, deviceError(e));
            return false;
        }
        if (index < 0 || index >= count) {
            writeError(err, errBytes, "CUDA device " + std::to_string(index) + " does not exist (" + std::to_string(count) +
                                          " device" + (count == 1 ? "" : "s") + ")");
            return false;
        }
        cudaDeviceProp prop{};
        cudaError_t pe = cudaGetDeviceProperties(&prop, index);
        if (pe != cudaSuccess) {
            writeError(err, errBytes, deviceError(pe));
            return false;
        }
        weir::DeviceInfo info;
        info.kind = weir::DeviceKind::Cuda;
        info.index = index;
        info.name = prop.name;
        info.totalBytes = prop.totalGlobalMem;
        int previous = 0;
        cudaGetDevice(&previous);
        size_t freeBytes = 0, totalBytes = 0;
        if (cudaSetDevice(index) == cudaSuccess && cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess) {
            info.freeBytes = freeBytes;
            info.totalBytes = totalBytes;
        }
        cudaGetLastError();
        cudaSetDevice(previous);
        int runtime = 0, driver = 0;
        cudaRuntimeGetVersion(&runtime);
        cudaDriverGetVersion(&driver);
        auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
        info.detail = "compute " + std::to_string(prop.major) + "." + std::to_string(prop.minor) + ", CUDA " +
                      version(runtime) + " (driver " + version(driver) + ")";
        *out = std::move(info);
        return true;
    } catch (const std::exception& ex) {
        writeError(err, errBytes, ex.what());
    } catch (...) {
        writeError(err, errBytes, "CUDA: unknown error");
    }
    return false;
}

weir::Backend* weir_cuda_create_backend(const weir::CudaBackendOptions* options, char* err, size_t errBytes) {
    try {
        const weir::CudaBackendOptions opts = options ? *options : weir::CudaBackendOptions{};
        int count = 0;
        const cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess || count == 0) {
            cudaGetLastError();
            writeError(err, errBytes, e != cudaSuccess ? deviceError(e) : std::string("no CUDA device"));
            return nullptr;
        }
        return new weir::cudabackend::CudaBackend(opts);
    } catch (const std::exception& ex) {
        writeError(err, errBytes, ex.what());
    } catch (...) {
        writeError(err, errBytes, "CUDA: unknown error");
    }
    return nullptr;
}

} // extern "C"
#pragma GCC visibility pop
