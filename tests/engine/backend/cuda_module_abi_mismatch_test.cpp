// A CUDA module built from another tree (another Backend interface) is
// refused by name before any of its code runs.
#include "tests/support/weir_test.h"

#include <cstdlib>
#include <string>

#include "engine/backend/backend_factory.h"
#include "engine/backend/cuda_module.h"
#include "weir/base/error.h"

using namespace weir;

WEIR_TEST(CudaModuleLoader, refusesAnotherAbi) {
    setenv("WEIR_CUDA_MODULE", WEIR_FAKE_CUDA_MODULE, 1);
    setenv("WEIR_FAKE_CUDA_ABI", "999", 1);
    CudaModule& m = CudaModule::instance();
    CHECK(!m.loaded());
    CHECK_MSG(m.problem().find("module ABI 999") != std::string::npos, m.problem());
    CHECK_MSG(m.problem().find(std::to_string(kCudaModuleAbi)) != std::string::npos, m.problem());
    BackendRequest r;
    r.device = "cuda:0";
    REQUIRE_THROWS(Error, createBackend(r));
}
