// The CUDA module's extern "C" entry points: without a device they refuse
// plainly, with a message and no exception; with one they describe it and
// make backends. Runs in the normal suite (no `gpu` label): both branches are
// real checks, and build machines take the first.
#include "tests/support/weir_test.h"

#include <cstring>
#include <memory>
#include <string>

#include "engine/backend/cuda_module_abi.h"

WEIR_TEST(CudaModule, reportsItsAbi) { CHECK_EQ(weir_cuda_module_abi(), weir::kCudaModuleAbi); }

WEIR_TEST(CudaModule, countsDevicesOrSaysWhyNot) {
    char err[256];
    std::memset(err, 'x', sizeof err);
    const int32_t n = weir_cuda_device_count(err, sizeof err);
    CHECK(std::memchr(err, '\0', sizeof err) != nullptr);  // terminated whatever happened
    if (n <= 0) {
        CHECK(std::strlen(err) > 0);
        std::printf("  no device here: %d, \"%s\"\n", n, err);
        // The message names the problem, not a bare code.
        CHECK(std::string(err).find("CUDA") != std::string::npos || std::string(err).find("driver") != std::string::npos);
    } else {
        weir::DeviceInfo info;
        REQUIRE(weir_cuda_device_info(0, &info, err, sizeof err));
        CHECK(info.kind == weir::DeviceKind::Cuda);
        CHECK(!info.name.empty());
        CHECK(info.totalBytes > 0);
        CHECK(info.freeBytes <= info.totalBytes);
        CHECK(info.detail.find("compute ") != std::string::npos);
        std::printf("  %s: %s, %llu MiB\n", info.name.c_str(), info.detail.c_str(),
                    static_cast<unsigned long long>(info.totalBytes >> 20));
    }
}

WEIR_TEST(CudaModule, refusesDevicesItDoesNotHave) {
    char err[256] = "";
    const int32_t n = weir_cuda_device_count(err, sizeof err);
    weir::DeviceInfo info;
    err[0] = '\0';
    CHECK(!weir_cuda_device_info(n > 0 ? n : 0, &info, err, sizeof err));
    CHECK(std::strlen(err) > 0);
    err[0] = '\0';
    CHECK(!weir_cuda_device_info(-1, &info, err, sizeof err));
    CHECK(std::strlen(err) > 0);
    err[0] = '\0';
    CHECK(!weir_cuda_device_info(0, nullptr, err, sizeof err));
    CHECK(std::strlen(err) > 0);

    weir::CudaBackendOptions opts;
    opts.device = n > 0 ? n : 0;  // one past the last device, or device 0 where there is none
    err[0] = '\0';
    weir::Backend* b = weir_cuda_create_backend(&opts, err, sizeof err);
    CHECK(b == nullptr);
    CHECK(std::strlen(err) > 0);
    delete b;
    std::printf("  refused: \"%s\"\n", err);
}

WEIR_TEST(CudaModule, messagesFitTheBuffer) {
    char err[8];
    std::memset(err, 'x', sizeof err);
    weir::CudaBackendOptions opts;
    opts.device = 1000;
    CHECK(weir_cuda_create_backend(&opts, err, sizeof err) == nullptr);
    CHECK_EQ(std::strlen(err), size_t(7));  // cut, terminated
    CHECK(weir_cuda_create_backend(&opts, nullptr, 0) == nullptr);  // no buffer: still no crash
}

WEIR_TEST(CudaModule, makesABackendOnARealDevice) {
    char err[256] = "";
    if (weir_cuda_device_count(err, sizeof err) <= 0) SKIP("no CUDA device");
    weir::CudaBackendOptions opts;
    std::unique_ptr<weir::Backend> b(weir_cuda_create_backend(&opts, err, sizeof err));
    REQUIRE_MSG(b != nullptr, err);
    CHECK(!b->hostVisible());
    CHECK(b->supportsKv(weir::KvDtype::FP8_E4M3));
    CHECK(b->supportsWeight(weir::GgmlType::Q4_K, 4096));
    CHECK(!b->supportsWeight(weir::GgmlType::Q4_K, 4000));
    CHECK(!b->supportsWeight(weir::GgmlType::Q2_K, 4096));
    // Memory round trip, zeroed on allocation.
    void* p = b->allocate(1000, "test");
    REQUIRE(p != nullptr);
    std::string back(1000, 'x');
    b->copyOut(back.data(), p, 1000);
    CHECK(back == std::string(1000, '\0'));
    const std::string text(1000, 'q');
    b->copyIn(p, text.data(), 1000);
    b->copyOut(back.data(), p, 1000);
    CHECK(back == text);
    b->release(p);
    CHECK(b->allocate(size_t(1) << 50, "far too much") == nullptr);  // refused, not thrown
}
