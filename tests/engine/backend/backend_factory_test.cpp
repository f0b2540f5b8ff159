// Choosing the backend from --device: the names it takes, what it refuses
// (by name, never a silent fallback to the CPU when a GPU was asked for),
// and the CPU backend's own facts.
#include "tests/support/weir_test.h"

#include <string>

#include "engine/backend/backend_factory.h"
#include "engine/backend/cpu_backend.h"
#include "engine/backend/cuda_module.h"
#include "weir/base/error.h"

using namespace weir;

WEIR_TEST(BackendFactory, parsesDeviceNames) {
    CHECK(parseDevice("").automatic);
    CHECK(parseDevice("auto").automatic);
    CHECK(!parseDevice("cpu").automatic);
    CHECK(parseDevice("cpu").kind == DeviceKind::Cpu);
    const DeviceChoice c = parseDevice("cuda");
    CHECK(c.kind == DeviceKind::Cuda && c.index == 0 && !c.automatic);
    const DeviceChoice c3 = parseDevice("cuda:3");
    CHECK(c3.kind == DeviceKind::Cuda && c3.index == 3);
}

WEIR_TEST(BackendFactory, refusesMalformedNamesByName) {
    for (const char* bad : {"gpu0", "cuda:", "cuda:-1", "cuda:1x", "tpu", "CPU", "cuda:99999999999"}) {
        try {
            parseDevice(bad);
            FAIL(std::string("accepted --device ") + bad);
        } catch (const Error& e) {
            const std::string what = e.what();
            CHECK_MSG(what.find(std::string("'") + bad + "'") != std::string::npos, what);
            CHECK_MSG(what.find("cpu, cuda or cuda:N") != std::string::npos, what);
        }
    }
}

WEIR_TEST(BackendFactory, cpuIsAlwaysThere) {
    BackendRequest r;
    r.device = "cpu";
    r.threads = 2;
    const auto b = createBackend(r);
    REQUIRE(b != nullptr);
    CHECK(b->device().kind == DeviceKind::Cpu);
    CHECK_EQ(b->threads(), 2);
    CHECK(b->hostVisible());
    CHECK(b->device().totalBytes > 0);
    const std::vector<DeviceInfo> all = listDevices();
    REQUIRE(!all.empty());
    CHECK(all.front().kind == DeviceKind::Cpu);
    CHECK_EQ(deviceName(all.front()), std::string("cpu"));
}

// Asked for by name, an absent GPU is an error that says why; automatic
// picks the CPU where there is none.
WEIR_TEST(BackendFactory, absentGpuIsAnErrorNotAFallback) {
    if (!CudaModule::instance().devices().empty()) SKIP("this machine has a CUDA device");
    BackendRequest r;
    r.device = "cuda:1";
    try {
        createBackend(r);
        FAIL("cuda:1 was created without a CUDA device");
    } catch (const Error& e) {
        const std::string what = e.what();
        std::printf("  refusal: %s\n", what.c_str());
        CHECK_MSG(what.rfind("--device cuda:1: ", 0) == 0, what);
        CHECK_MSG(what.size() > std::string("--device cuda:1: ").size() + 8, what);  // a reason follows
    }
    r.device = "";
    CHECK(createBackend(r)->device().kind == DeviceKind::Cpu);
}

WEIR_TEST(BackendFactory, moduleCandidatesStartWithTheOverride) {
    setenv("WEIR_CUDA_MODULE", "/opt/x/libweir-cuda.so", 1);
    const auto c = cudaModuleCandidates();
    unsetenv("WEIR_CUDA_MODULE");
    REQUIRE(c.size() >= 2);
    CHECK_EQ(c.front(), std::string("/opt/x/libweir-cuda.so"));
    CHECK_EQ(c.back(), std::string("libweir-cuda.so"));  // the loader's own search path last
}

// The CPU backend's memory: zeroed, copies in every direction.
WEIR_TEST(CpuBackend, memoryIsZeroedAndCopies) {
    CpuBackend b({1, false});
    auto* p = static_cast<unsigned char*>(b.allocate(4096, "test"));
    REQUIRE(p != nullptr);
    bool zero = true;
    for (int i = 0; i < 4096; ++i) zero = zero && p[i] == 0;
    CHECK(zero);
    const char src[] = "weir";
    b.copyIn(p, src, 5);
    b.copyWithin(p + 100, p, 5);
    char out[5];
    b.copyOut(out, p + 100, 5);
    CHECK_EQ(std::string(out), std::string("weir"));
    b.release(p);
}
