// Throughput of the decode kernels on the device at an 8B-class model's
// shapes, against the device's copy bandwidth: prints numbers, asserts
// nothing (tests/gpu/run.sh runs it after the tests). Goal on an H200: the
// GEMV at one activation row reads weights at >= 70% of copy bandwidth.
#include <cuda_runtime.h>  // the typed cudaMalloc overloads

#include <cstdio>
#include <random>
#include <vector>

#include "kernels/cuda/gemv.h"
#include "kernels/cuda/gemv_q8.h"
#include "kernels/cuda/paged_attention.h"
#include "weir/base/ggml_type.h"

namespace {

bool ok(cudaError_t e, const char* what) {
    if (e != cudaSuccess) std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

template <class Fn>
float millisPerRun(Fn&& fn, int runs) {
    fn();  // warm-up
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a);
    for (int i = 0; i < runs; ++i) fn();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms / float(runs);
}

void* deviceRandom(size_t bytes, uint32_t seed) {
    std::vector<uint8_t> host(bytes);
    std::mt19937 rng(seed);
    for (auto& b : host) b = uint8_t(rng() & 0x3F);  // small values: finite f16/bf16 bits and scales
    void* p = nullptr;
    if (!ok(cudaMalloc(&p, bytes), "cudaMalloc")) return nullptr;
    cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice);
    return p;
}

} // namespace

int main() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        std::printf("SKIPPED: no CUDA device\n");
        return 77;
    }
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    std::printf("%s\n", prop.name);

    // Copy bandwidth: bytes read plus bytes written per second, 1 GiB each way.
    const size_t copyBytes = size_t(1) << 30;
    void *src = nullptr, *dst = nullptr;
    if (!ok(cudaMalloc(&src, copyBytes), "cudaMalloc") || !ok(cudaMalloc(&dst, copyBytes), "cudaMalloc")) return 1;
    const float copyMs = millisPerRun([&] { cudaMemcpyAsync(dst, src, copyBytes, cudaMemcpyDeviceToDevice); }, 10);
    const double copyGBs = 2.0 * double(copyBytes) / (copyMs * 1e-3) / 1e9;
    std::printf("device copy: %.0f GB/s (read + write)\n", copyGBs);
    cudaFree(src);
    cudaFree(dst);

    struct Shape {
        const char* name;
        int64_t N, K;
    };
    const Shape shapes[] = {{"ffn_up   14336x4096", 14336, 4096}, {"ffn_down 4096x14336", 4096, 14336},
                            {"attn_q   4096x4096", 4096, 4096}, {"output   128256x4096", 128256, 4096}};
    const weir::GgmlType types[] = {weir::GgmlType::Q4_K, weir::GgmlType::Q5_K, weir::GgmlType::Q6_K, weir::GgmlType::Q8_0,
                                    weir::GgmlType::Q4_0, weir::GgmlType::Q4_1, weir::GgmlType::Q5_0, weir::GgmlType::F16,
                                    weir::GgmlType::BF16};
    for (const Shape& s : shapes) {
        for (weir::GgmlType t : types) {
            const size_t rb = weir::rowBytes(t, s.K), wBytes = rb * size_t(s.N);
            void* w = deviceRandom(wBytes, 1);
            float *x = nullptr, *y = nullptr;
            cudaMalloc(&x, size_t(8 * s.K) * 4);
            cudaMemset(x, 0, size_t(8 * s.K) * 4);
            cudaMalloc(&y, size_t(8 * s.N) * 4);
            void* xq = nullptr;
            cudaMalloc(&xq, weir::cuda::q8ActivationBytes(8, s.K));
            weir::cuda::quantizeActivations(x, 8, s.K, xq, nullptr);
            for (bool int8 : {false, true}) {
                if (int8 && !weir::cuda::gemvQ8Supported(t)) continue;
                std::printf("%s %-5s %s", s.name, weir::typeTraits(t)->name, int8 ? "int8 x" : "f32 x ");
                for (int64_t m : {1, 2, 4, 8}) {
                    const float ms = millisPerRun(
                        [&] {
                            if (int8) weir::cuda::gemvQ8(t, w, rb, s.K, s.N, xq, m, y, nullptr);
                            else weir::cuda::gemv(t, w, rb, s.K, s.N, x, m, y, nullptr);
                        },
                        20);
                    const double gbs = double(wBytes) / (ms * 1e-3) / 1e9;
                    std::printf("  M=%lld %6.1f us %5.0f GB/s (%3.0f%%)", (long long)m, ms * 1e3, gbs, 100.0 * gbs / copyGBs);
                }
                std::printf("\n");
            }
            cudaFree(xq);
            cudaFree(w);
            cudaFree(x);
            cudaFree(y);
        }
    }

    // Decode attention at 8k context: 1 token, 32 query heads over 8 KV heads of 128, F16 rows.
    {
        const int32_t ctx = 8192, page = 16, hd = 128, nKv = 8;
        const size_t rowBytes = size_t(nKv) * hd * 2, pool = size_t(ctx) * rowBytes;
        void* k = deviceRandom(pool, 2);
        void* v = deviceRandom(pool, 3);
        std::vector<int32_t> meta{ctx - 1, 2};
        for (int32_t p = 0; p < ctx / page; ++p) meta.push_back((p * 37) % (ctx / page));
        int32_t* dmeta = nullptr;
        cudaMalloc(&dmeta, meta.size() * 4);
        cudaMemcpy(dmeta, meta.data(), meta.size() * 4, cudaMemcpyHostToDevice);
        weir::cuda::AttendShape shape{32, nKv, hd, hd, 0, 0.088f};
        float *q = nullptr, *out = nullptr, *scratch = nullptr;
        cudaMalloc(&q, 32 * hd * 4);
        cudaMemset(q, 0, 32 * hd * 4);
        cudaMalloc(&out, 32 * hd * 4);
        cudaMalloc(&scratch, weir::cuda::attendScratchBytes(1, shape) + 4);
        weir::cuda::PagedKvRead kv{static_cast<uint8_t*>(k), static_cast<uint8_t*>(v), weir::GgmlType::F16, rowBytes, page};
        const float ms = millisPerRun(
            [&] { weir::cuda::pagedAttention(q, out, 1, dmeta, {dmeta, dmeta + 1}, kv, shape, scratch, nullptr); }, 20);
        std::printf("attention decode 8k f16 (32/8 heads of 128): %.1f us, %.0f GB/s of K+V\n", ms * 1e3,
                    2.0 * double(pool) / (ms * 1e-3) / 1e9);
    }
    return ok(cudaDeviceSynchronize(), "kernels") ? 0 : 1;
}
