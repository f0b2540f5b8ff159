#include "engine/backend/cuda_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "weir/base/error.h"

namespace weir {

namespace {

constexpr const char* kModuleFile = "libweir-cuda.so";

std::string executableDir() {
    char buf[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return {};
    buf[n] = '\0';
    return std::filesystem::path(buf).parent_path().string();
}

} // namespace

std::vector<std::string> cudaModuleCandidates() {
    std::vector<std::string> out;
    if (const char* env = std::getenv("WEIR_CUDA_MODULE"); env && *env) out.push_back(env);
    if (const std::string dir = executableDir(); !dir.empty()) {
        out.push_back(dir + "/../lib/" + kModuleFile);
        out.push_back(dir + "/../lib/weir/" + kModuleFile);
        out.push_back(dir + "/" + kModuleFile);
    }
    out.push_back(kModuleFile);
    return out;
}

CudaModule& CudaModule::instance() {
    static CudaModule module;
    return module;
}

CudaModule::CudaModule() {
    std::string tried;  // why a module that is there could not be opened
    void* handle = nullptr;
    for (const std::string& candidate : cudaModuleCandidates()) {
        const bool bare = candidate.find('/') == std::string::npos;
        if (!bare && !std::filesystem::exists(candidate)) continue;
        handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            path_ = candidate;
            break;
        }
        // A module that is there but cannot be opened says why (a missing
        // libcublas, a libcuda too old): that is the message worth keeping.
        const char* why = dlerror();
        if (!bare) tried = why ? why : candidate;
    }
    if (!handle) {
        problem_ = tried.empty() ? std::string("this build has no CUDA support (") + kModuleFile +
                                       " is not next to the program nor in the library path)"
                                 : std::string("the CUDA module cannot be opened: ") + tried;
        return;
    }
    auto abi = reinterpret_cast<decltype(&weir_cuda_module_abi)>(dlsym(handle, "weir_cuda_module_abi"));
    deviceCount_ = reinterpret_cast<decltype(deviceCount_)>(dlsym(handle, "weir_cuda_device_count"));
    deviceInfo_ = reinterpret_cast<decltype(deviceInfo_)>(dlsym(handle, "weir_cuda_device_info"));
    create_ = reinterpret_cast<decltype(create_)>(dlsym(handle, "weir_cuda_create_backend"));
    if (!abi || !deviceCount_ || !deviceInfo_ || !create_) {
        problem_ = path_ + " is not a Weir CUDA module (an entry point is missing)";
        return;
    }
    if (const int32_t v = abi(); v != kCudaModuleAbi) {
        problem_ = path_ + " was built for module ABI " + std::to_string(v) + ", this engine needs " +
                   std::to_string(kCudaModuleAbi) + " (rebuild both from one tree)";
        return;
    }
    loaded_ = true;
}

std::vector<DeviceInfo> CudaModule::devices() {
    std::vector<DeviceInfo> out;
    if (!loaded_) return out;
    char err[512] = {0};
    const int32_t n = deviceCount_(err, sizeof err);
    if (n < 0) {
        problem_ = err[0] ? err : "the CUDA driver reported an error";
        return out;
    }
    if (n == 0) {
        problem_ = "no CUDA device";
        return out;
    }
    for (int32_t i = 0; i < n; ++i) {
        DeviceInfo d;
        err[0] = '\0';
        if (deviceInfo_(i, &d, err, sizeof err)) out.push_back(std::move(d));
    }
    return out;
}

std::unique_ptr<Backend> CudaModule::createBackend(const CudaBackendOptions& options) {
    if (!loaded_) throw Error("cannot run on cuda:" + std::to_string(options.device) + ": " + problem_);
    char err[512] = {0};
    Backend* b = create_(&options, err, sizeof err);
    if (!b)
        throw Error("cannot run on cuda:" + std::to_string(options.device) + ": " +
                    (err[0] ? std::string(err) : std::string("the CUDA module refused without a reason")));
    return std::unique_ptr<Backend>(b);
}

} // namespace weir
