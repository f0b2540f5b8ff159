// matmul() throughput at the Gemma 3 270M weight shapes, one JSON object per
// line: {"type", "tensor", "k", "n", "m", "threads", "path", "ms", "gflops",
// "gbps", "cpu_ms", "gflops_per_core"}.
// GFLOP/s counts 2*M*N*K; GB/s counts weight bytes + f32 input + f32 output
// moved once per call; both use wall time. cpu_ms is the process CPU time per
// call (all threads) and gflops_per_core = flops / CPU seconds: on a shared,
// oversubscribed machine that is the number to compare kernels with.
//
//   build/bin/matmul_bench [--types Q4_K,Q8_0] [--m 1,64] [--threads 1,2]
//                          [--path avx2|scalar] [--seconds 0.25] [--no-output-proj]
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul.h"

using namespace weir::kernels;

namespace {

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    size_t b = 0;
    while (b <= s.size()) {
        const size_t e = s.find(',', b);
        out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
        if (e == std::string::npos) break;
        b = e + 1;
    }
    return out;
}

std::vector<int> splitInts(const std::string& s) {
    std::vector<int> v;
    for (const auto& p : split(s)) v.push_back(std::atoi(p.c_str()));
    return v;
}

// Offsets of the f16 scales inside each block (kept small so values are finite).
std::vector<int> scaleOffsets(GgmlType t) {
    switch (t) {
    case GgmlType::Q4_0: case GgmlType::Q5_0: case GgmlType::Q8_0: return {0};
    case GgmlType::Q4_1: case GgmlType::Q5_1: case GgmlType::Q4_K: case GgmlType::Q5_K: return {0, 2};
    case GgmlType::Q6_K: return {208};
    default: return {};
    }
}

std::vector<uint8_t> randomWeights(GgmlType t, int64_t k, int64_t n) {
    const TypeTraits* tr = typeTraits(t);
    std::vector<uint8_t> w(rowBytes(t, k) * size_t(n));
    std::mt19937_64 rng(42);
    if (t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16) {
        std::normal_distribution<float> normal(0.0f, 0.05f);
        for (size_t i = 0; i < w.size() / size_t(tr->blockBytes); ++i) {
            const float v = normal(rng);
            if (t == GgmlType::F32) std::memcpy(&w[i * 4], &v, 4);
            const uint16_t h = t == GgmlType::F16 ? f32ToF16(v) : f32ToBf16(v);
            if (t != GgmlType::F32) std::memcpy(&w[i * 2], &h, 2);
        }
        return w;
    }
    for (size_t i = 0; i + 8 <= w.size(); i += 8) {
        const uint64_t r = rng();
        std::memcpy(&w[i], &r, 8);
    }
    const uint16_t scale = f32ToF16(0.01f);
    for (size_t b = 0; b < w.size() / size_t(tr->blockBytes); ++b)
        for (int off : scaleOffsets(t)) std::memcpy(&w[b * size_t(tr->blockBytes) + size_t(off)], &scale, 2);
    return w;
}

double cpuSeconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

} // namespace

int main(int argc, char** argv) {
    std::string types = "F32,F16,BF16,Q4_0,Q4_1,Q5_0,Q5_1,Q8_0,Q4_K,Q5_K,Q6_K", ms = "1,64", threads = "1,2";
    std::string path = kernelPathName(bestKernelPath());
    double seconds = 0.25;
    bool outputProj = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "missing value after %s\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--types") types = next();
        else if (a == "--m") ms = next();
        else if (a == "--threads") threads = next();
        else if (a == "--path") path = next();
        else if (a == "--seconds") seconds = std::atof(next().c_str());
        else if (a == "--no-output-proj") outputProj = false;
        else {
            std::fprintf(stderr, "unknown option %s\nusage: %s [--types A,B] [--m 1,64] [--threads 1,2] "
                                 "[--path avx2|scalar] [--seconds S] [--no-output-proj]\n", a.c_str(), argv[0]);
            return 2;
        }
    }
    if (!forceKernelPath(path == "scalar" ? KernelPath::Scalar : KernelPath::Avx2)) {
        std::fprintf(stderr, "kernel path %s is not supported on this CPU\n", path.c_str());
        return 1;
    }

    struct Shape { int64_t k, n; const char* what; };
    std::vector<Shape> shapes = {{640, 1024, "attn_q"}, {640, 2048, "ffn_up"}, {2048, 640, "ffn_down"}, {1024, 640, "attn_output"}};
    if (outputProj) shapes.push_back({640, 262144, "output"});

    for (const std::string& tn : split(types)) {
        GgmlType type = GgmlType::F32;
        bool found = false;
        for (uint32_t id = 0; id < 40; ++id)
            if (const TypeTraits* t = typeTraits(id); t && tn == t->name) {
                type = GgmlType(id);
                found = true;
            }
        if (!found) {
            std::fprintf(stderr, "unknown type %s\n", tn.c_str());
            return 2;
        }
        for (const Shape& s : shapes) {
            if (s.n == 262144 && type != GgmlType::Q8_0) continue;  // the tied output projection is Q8_0
            if (!matmulSupports(type, s.k)) continue;                // K-quants need K % 256 == 0
            const std::vector<uint8_t> w = randomWeights(type, s.k, s.n);
            const WeightView view{type, w.data(), s.k, s.n, rowBytes(type, s.k)};
            for (int m : splitInts(ms)) {
                std::vector<float> x(size_t(m * s.k)), y(size_t(m) * size_t(s.n));
                std::mt19937 rng(1);
                std::normal_distribution<float> normal(0.0f, 1.0f);
                for (auto& v : x) v = normal(rng);
                for (int th : splitInts(threads)) {
                    ThreadPool pool(th);
                    matmul(view, x.data(), m, y.data(), pool);  // warm up caches and scratch
                    int reps = 0;
                    const double c0 = cpuSeconds();
                    const auto t0 = std::chrono::steady_clock::now();
                    double elapsed = 0;
                    do {
                        matmul(view, x.data(), m, y.data(), pool);
                        ++reps;
                        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                    } while (elapsed < seconds);
                    const double per = elapsed / reps, cpuPer = (cpuSeconds() - c0) / reps;
                    const double flops = 2.0 * double(m) * double(s.n) * double(s.k);
                    const double bytes = double(w.size()) + 4.0 * double(m) * double(s.k) + 4.0 * double(m) * double(s.n);
                    std::printf("{\"type\": \"%s\", \"tensor\": \"%s\", \"k\": %lld, \"n\": %lld, \"m\": %d, \"threads\": %d, "
                                "\"path\": \"%s\", \"ms\": %.4f, \"gflops\": %.2f, \"gbps\": %.2f, \"cpu_ms\": %.4f, "
                                "\"gflops_per_core\": %.2f}\n",
                                tn.c_str(), s.what, (long long)s.k, (long long)s.n, m, th, path.c_str(), per * 1e3,
                                flops / per * 1e-9, bytes / per * 1e-9, cpuPer * 1e3, flops / cpuPer * 1e-9);
                    std::fflush(stdout);
                }
            }
        }
    }
    return 0;
}
