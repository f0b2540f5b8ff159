#pragma once
// Shared by the GPU kernel tests: skipping where there is no CUDA device,
// device buffers filled from and read back into host vectors, and random data.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/support/weir_test.h"

namespace weirtest {

inline bool cudaDevicePresent() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) cudaGetLastError();
    return e == cudaSuccess && n > 0;
}

// Ends the test as skipped (the runner prints "SKIPPED: ...: no CUDA device").
#define REQUIRE_CUDA_DEVICE()                                            \
    do {                                                                 \
        if (!::weirtest::cudaDevicePresent()) SKIP("no CUDA device");    \
    } while (0)

inline void cudaOk(cudaError_t e, const char* what) {
    if (e != cudaSuccess) FAIL(std::string(what) + ": " + cudaGetErrorString(e));
}

// A device copy of `bytes` bytes, freed with the object.
class DeviceBytes {
public:
    explicit DeviceBytes(size_t bytes, int fill = 0) : bytes_(bytes) {
        cudaOk(cudaMalloc(&p_, bytes ? bytes : 1), "cudaMalloc");
        cudaOk(cudaMemset(p_, fill, bytes), "cudaMemset");
    }
    template <class T>
    explicit DeviceBytes(const std::vector<T>& host) : DeviceBytes(host.size() * sizeof(T)) {
        cudaOk(cudaMemcpy(p_, host.data(), bytes_, cudaMemcpyHostToDevice), "upload");
    }
    ~DeviceBytes() { cudaFree(p_); }
    DeviceBytes(const DeviceBytes&) = delete;
    DeviceBytes& operator=(const DeviceBytes&) = delete;

    template <class T = void>
    T* as() const { return static_cast<T*>(p_); }
    template <class T>
    std::vector<T> read() const {
        cudaOk(cudaDeviceSynchronize(), "kernels");
        std::vector<T> out(bytes_ / sizeof(T));
        cudaOk(cudaMemcpy(out.data(), p_, out.size() * sizeof(T), cudaMemcpyDeviceToHost), "download");
        return out;
    }
    size_t bytes() const { return bytes_; }

private:
    void* p_ = nullptr;
    size_t bytes_ = 0;
};

inline std::vector<float> randomFloats(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

} // namespace weirtest
