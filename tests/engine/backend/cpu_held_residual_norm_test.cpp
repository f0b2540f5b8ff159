// CpuBackend holds a residual norm (or an rmsNorm) of several rows until the next op
// (backend.h: its results are first read by the next op): a matmul whose
// input is its y runs it row by row inside its own job; any other op, a
// matmul of another input, a copy or the end of the step runs it first.
// Whatever follows, x, o, y and every output must have the bits a one-thread
// backend gives (it runs the norm at once), and the norm followed by its
// matmul must be one round trip where it used to be two (rows of 16k values
// and more) or one plus the driving thread alone.
#include "tests/support/weir_test.h"

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "engine/backend/cpu_backend.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/cpu/quant_test_util.h"

using namespace weir;

namespace {

using weirtest::randomMatrix;
using weirtest::RandomMatrix;

// What follows the norm.
enum class Next { Glu, Many, Matmul, MatmulOfAnotherInput, RmsNorm, ReadRows, CopyOut, EndStep };
const char* nameOf(Next n) {
    switch (n) {
    case Next::Glu: return "matmulGlu of y";
    case Next::Many: return "matmulMany of y";
    case Next::Matmul: return "matmul of y";
    case Next::MatmulOfAnotherInput: return "matmul of another input";
    case Next::RmsNorm: return "rmsNorm of y";
    case Next::ReadRows: return "readRows of y";
    case Next::CopyOut: return "copyOut of x";
    default: return "endStep";
    }
}

struct Step {
    std::vector<float> x, o, y, other, out1, out2, out3;
};

struct Weights {
    RandomMatrix gate, up, v;
    Weights(int64_t E, std::mt19937& rng)
        : gate(randomMatrix(GgmlType::Q5_0, E, 96, rng)), up(randomMatrix(GgmlType::Q4_K, E, 96, rng)),
          v(randomMatrix(GgmlType::Q8_0, E, 48, rng)) {}
};

// A decode step of `rows` sequences, every row wanting logits.
struct DecodeStep {
    Batch batch;
    std::vector<int32_t> outputRows;
    StepInfo info;
    explicit DecodeStep(int64_t rows) {
        for (int64_t i = 0; i < rows; ++i) {
            batch.add(int32_t(i), int32_t(i), 7 + int32_t(i), true);
            outputRows.push_back(int32_t(i));
        }
        info.batch = &batch;
        info.outputRows = outputRows;
    }
};

// Runs residualNorm (or rmsNorm) then `next` on a backend of `threads` threads; returns
// every buffer and (through trips) the round trips of the two ops.
Step run(int threads, bool residual, Next next, int64_t rows, int64_t E, const Weights& w, uint64_t& trips) {
    CpuBackend backend({threads, false});
    std::mt19937 rng(uint32_t(rows * 31 + E));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    Step s;
    s.x.resize(size_t(rows * E));
    s.o.resize(size_t(rows * E));
    s.other.resize(size_t(rows * E));
    for (auto* v : {&s.x, &s.o, &s.other})
        for (float& f : *v) f = nd(rng);
    s.y.assign(size_t(rows * E), -7.0f);
    std::vector<float> postNorm(static_cast<size_t>(E)), nextNorm(static_cast<size_t>(E));
    for (float& f : postNorm) f = 1.0f + 0.3f * nd(rng);
    for (float& f : nextNorm) f = 1.0f + 0.3f * nd(rng);
    s.out1.assign(size_t(rows * 96), 0.0f);
    s.out2.assign(size_t(rows * 96), 0.0f);
    s.out3.assign(size_t(rows * 96), 0.0f);

    const DecodeStep step(rows);
    backend.beginStep(step.info);
    const uint64_t before = kernels::ThreadPool::processCounters().roundTrips;
    if (residual) backend.residualNorm(s.x.data(), s.o.data(), postNorm.data(), nextNorm.data(), s.y.data(), rows, E, 1e-6f);
    else backend.rmsNorm(s.x.data(), nextNorm.data(), s.y.data(), rows, E, 1e-6f);
    switch (next) {
    case Next::Glu:
        backend.matmulGlu(GluActivation::GeluTanh, {w.gate.view, s.out1.data()}, {w.up.view, s.out2.data()}, s.y.data(),
                          s.out3.data(), rows, StepRows::All);
        break;
    case Next::Many: {
        const Projection outs[] = {{w.gate.view, s.out1.data()}, {w.v.view, s.out2.data()}};
        backend.matmulMany(outs, s.y.data(), rows, StepRows::All);
        break;
    }
    case Next::Matmul: backend.matmul(w.up.view, s.y.data(), rows, s.out1.data(), StepRows::All); break;
    case Next::MatmulOfAnotherInput: backend.matmul(w.up.view, s.other.data(), rows, s.out1.data(), StepRows::All); break;
    case Next::RmsNorm: backend.rmsNorm(s.y.data(), nullptr, s.other.data(), rows, E, 1e-6f); break;
    case Next::ReadRows: backend.readRows(s.y.data(), s.other.data(), size_t(rows * E)); break;
    case Next::CopyOut: backend.copyOut(s.other.data(), s.x.data(), size_t(rows * E) * sizeof(float)); break;
    case Next::EndStep: break;
    }
    trips = kernels::ThreadPool::processCounters().roundTrips - before;
    backend.endStep();
    return s;
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

WEIR_TEST(CpuHeldResidualNorm, whateverFollowsGetsTheBitsOfTheNormRunAtOnce) {
    std::mt19937 rng(3);
    for (const int64_t E : {256, 1024}) {
        const Weights w(E, rng);
        for (const int64_t rows : {1, 2, 16, 40}) {
            for (const Next next : {Next::Glu, Next::Many, Next::Matmul, Next::MatmulOfAnotherInput, Next::RmsNorm,
                                    Next::ReadRows, Next::CopyOut, Next::EndStep})
            for (const bool residual : {true, false}) {
                uint64_t trips = 0;
                const Step want = run(1, residual, next, rows, E, w, trips);
                for (const int threads : {2, 4}) {
                    const Step got = run(threads, residual, next, rows, E, w, trips);
                    const std::string where = std::string(residual ? "residualNorm, " : "rmsNorm, ") + nameOf(next) + ", " +
                                              std::to_string(threads) + " threads, " + std::to_string(rows) + " rows of " +
                                              std::to_string(E);
                    CHECK_MSG(same(got.x, want.x), where + ": x differs");
                    CHECK_MSG(same(got.o, want.o), where + ": o differs");
                    CHECK_MSG(same(got.y, want.y), where + ": y differs");
                    CHECK_MSG(same(got.other, want.other), where + ": what the op wrote differs");
                    CHECK_MSG(same(got.out1, want.out1) && same(got.out2, want.out2) && same(got.out3, want.out3),
                              where + ": the products differ");
                }
            }
        }
    }
}

// 16 rows of 1,024 values (16k: the norm was a job of its own) and of 256
// (it ran on the driving thread alone): either way now one job with the FFN's.
WEIR_TEST(CpuHeldResidualNorm, theNormAndItsMatmulAreOneRoundTrip) {
    std::mt19937 rng(4);
    for (const int64_t E : {256, 1024}) {
        const Weights w(E, rng);
        for (const Next next : {Next::Glu, Next::Many, Next::Matmul})
            for (const bool residual : {true, false}) {
                uint64_t trips = 0;
                run(4, residual, next, 16, E, w, trips);
                CHECK_MSG(trips == 1, std::string(residual ? "residualNorm, " : "rmsNorm, ") + nameOf(next) + ", rows of " +
                                          std::to_string(E) + ": " + std::to_string(trips) + " round trips, want 1");
            }
    }
}

// A step that threw between a norm and its matmul leaves the norm held; the
// next step must not run it (its buffers may be gone by then): x, o and y of
// the failed step stay as they were.
WEIR_TEST(CpuHeldResidualNorm, aNormLeftByAFailedStepIsDropped) {
    CpuBackend backend({4, false});
    constexpr int64_t rows = 16, E = 256;
    const DecodeStep step(rows);
    std::vector<float> x(size_t(rows * E), 1.5f), o(size_t(rows * E), 0.25f), y(size_t(rows * E), -7.0f);
    std::vector<float> norm(size_t(E), 1.0f);
    const std::vector<float> x0 = x, o0 = o, y0 = y;
    backend.beginStep(step.info);
    backend.residualNorm(x.data(), o.data(), norm.data(), norm.data(), y.data(), rows, E, 1e-6f);
    // The step ends here without endStep (an op threw); the next one begins.
    backend.beginStep(step.info);
    std::vector<float> z(size_t(rows * E), 2.0f), out(size_t(rows * E));
    backend.rmsNorm(z.data(), nullptr, out.data(), rows, E, 1e-6f);
    backend.readRows(out.data(), out.data(), out.size());
    backend.endStep();
    CHECK_MSG(same(x, x0) && same(o, o0) && same(y, y0), "the failed step's norm ran in the next step");
    CHECK_NEAR(out[0], 1.0f, 1e-5f);  // the new step's own norm ran
}
