// The CUDA module loader against a module whose driver fails (a stand-in
// built by the tests: fake_cuda_module.cpp): the driver's own words reach
// the user, --device cuda is refused with them, and automatic picks the CPU.
#include "tests/support/weir_test.h"

#include <cstdlib>
#include <string>

#include "engine/backend/backend_factory.h"
#include "engine/backend/cuda_module.h"
#include "weir/base/error.h"

using namespace weir;

WEIR_TEST(CudaModuleLoader, reportsTheDriversProblem) {
    // Before anything opens the module: it is opened once per process.
    setenv("WEIR_CUDA_MODULE", WEIR_FAKE_CUDA_MODULE, 1);
    unsetenv("WEIR_FAKE_CUDA_ABI");
    CudaModule& m = CudaModule::instance();
    REQUIRE_MSG(m.loaded(), m.problem());
    CHECK_EQ(m.path(), std::string(WEIR_FAKE_CUDA_MODULE));
    CHECK(m.devices().empty());
    CHECK_MSG(m.problem().find("CUDA driver version is insufficient") != std::string::npos, m.problem());

    std::string problem;
    const auto devices = listDevices(&problem);
    CHECK_EQ(devices.size(), size_t(1));  // the CPU only
    CHECK_MSG(problem.find("insufficient") != std::string::npos, problem);

    BackendRequest r;
    r.device = "cuda";
    try {
        createBackend(r);
        FAIL("a backend was made on a failing driver");
    } catch (const Error& e) {
        const std::string what = e.what();
        CHECK_MSG(what.find("--device cuda") == 0 && what.find("insufficient") != std::string::npos, what);
    }
    r.device = "";
    CHECK(createBackend(r)->device().kind == DeviceKind::Cpu);
}
