// What a decode step reads (ModelRunner::decodeTraffic), checked against the
// GGUF's own tensor table, and the read-bandwidth probe weir-cli bench
// divides it by.
#include "tests/support/weir_test.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "engine/gguf/gguf_file.h"
#include "kernels/cpu/cpu_features.h"
#include "weir/model_runner.h"

using namespace weir;

WEIR_TEST(DecodeTraffic, defaultModelCountsEveryWeightOnceAndTheKvInView) {
    const std::string path = weirtest::environment("WEIR_MODEL");
    if (path.empty() || !std::filesystem::exists(path)) SKIP("default model not present (WEIR_MODEL)");
    const auto file = gguf::GgufFile::open(path);
    uint64_t all = 0;
    for (const gguf::TensorInfo& t : file->tensors()) all += t.nbytes;
    const gguf::TensorInfo* embd = file->findTensor("token_embd.weight");
    REQUIRE(embd);

    ModelRunnerOptions o;
    o.modelPath = path;
    o.threads = 1;
    o.repackWeights = false;  // every weight read in place: the file's own bytes
    ModelRunner runner(o);
    const ModelConfig& c = runner.config();
    const DecodeTraffic t = runner.decodeTraffic();
    if (file->findTensor("output.weight")) {
        // A separate head: the embedding table is read one row at a time.
        CHECK_EQ(t.weightBytes, all - embd->nbytes);
    } else {
        // Gemma ties them: the embedding table is the output head, read whole.
        CHECK_EQ(t.weightBytes, all);
        CHECK_EQ(t.outputHeadBytes, embd->nbytes);
    }
    // Repacked (weight_tiles.h), a Q8_0 output head is read from a copy where
    // the CPU has the kernels that take it: per 16 rows and block of 32, 576
    // bytes (the signed bytes, 16 int16 sums and the 16 f16 scales) instead of
    // 544, the last tile padded to 16 rows.
    o.repackWeights = true;
    const DecodeTraffic packed = ModelRunner(o).decodeTraffic();
    uint64_t expected = 0;
    if (kernels::activeKernelPath() == kernels::KernelPath::Avx2 && kernels::vnniActive())
        for (const gguf::TensorInfo& m : file->tensors())
            if (m.type == kernels::GgmlType::Q8_0 && m.nDims == 2 &&
                (m.name == "output.weight" || (m.name == "token_embd.weight" && !file->findTensor("output.weight"))))
                expected += uint64_t((m.ne[1] + 15) / 16) * uint64_t(m.ne[0] / 32) * 576 - uint64_t(m.ne[1]) * uint64_t(m.ne[0] / 32) * 34;
    CHECK_EQ(packed.weightBytes - t.weightBytes, expected);
    CHECK(expected <= t.weightBytes / 16);
    std::printf("  decode reads %llu bytes a step in place, %llu repacked\n", (unsigned long long)t.weightBytes,
                (unsigned long long)packed.weightBytes);
    int sliding = 0;
    for (bool b : c.layerSlides) sliding += b ? 1 : 0;
    const uint64_t perLayer = 2ull * uint64_t(c.nHeadKv) * uint64_t(c.headDimK) * 2;  // K and V, f16
    CHECK_EQ(t.kvBytesPerPosition, perLayer * uint64_t(c.nLayer - sliding));
    CHECK_EQ(t.kvBytesPerWindowPosition, perLayer * uint64_t(sliding));
    REQUIRE(c.slidingWindow > 0);
    // Past the window, sliding layers see only the window.
    const int64_t far = int64_t(c.slidingWindow) * 4;
    CHECK_EQ(t.bytesAt(far), t.weightBytes + t.kvBytesPerPosition * uint64_t(far) +
                                 t.kvBytesPerWindowPosition * uint64_t(c.slidingWindow));
    CHECK_EQ(t.bytesAt(10), t.weightBytes + (t.kvBytesPerPosition + t.kvBytesPerWindowPosition) * 10);
}

WEIR_TEST(DecodeTraffic, readBandwidthIsMeasured) {
    const double bytesPerS = measureReadBandwidth(1);
    std::printf("  read bandwidth, 1 thread: %.2f GB/s\n", bytesPerS / 1e9);
    // Any machine that runs the suite streams more than 100 MB/s and less than 10 TB/s.
    CHECK(std::isfinite(bytesPerS));
    CHECK(bytesPerS > 1e8);
    CHECK(bytesPerS < 1e13);
}
