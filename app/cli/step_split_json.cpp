#include "app/cli/step_split_json.h"

#include "app/cli/cli_json.h"

namespace weir::cli {

std::string stepSplitJson(const StepProfile& d, double wallSeconds, uint64_t steps) {
    const double per = steps ? 1.0 / double(steps) : 0.0;
    auto ms = [&](double ns) { return jsonNumber(ns * 1e-6 * per); };
    double opsNs = 0, opsPoolWallNs = 0;
    std::string ops = "{";
    for (int i = 0; i < kStepOps; ++i) {
        opsNs += double(d.opNs[i]);
        opsPoolWallNs += double(d.opPoolWallNs[i]);
        ops += std::string(i ? "," : "") + "\"" + stepOpName(StepOp(i)) + "\":" + ms(double(d.opNs[i]));
    }
    ops += "}";
    const PoolTiming& p = d.pool;
    auto ratio = [](double a, double b) { return jsonNumber(b > 0 ? a / b : 0.0); };
    // Per op kind: the time its driving thread ran alone, and how busy its
    // round trips kept the threads (what scales with threads and what not).
    std::string opsPool = "{";
    for (int i = 0; i < kStepOps; ++i)
        opsPool += std::string(i ? "," : "") + "\"" + stepOpName(StepOp(i)) + "\":{\"alone_ms\":" +
                   ms(double(d.opNs[i]) - double(d.opPoolWallNs[i])) + ",\"in_round_trips_ms\":" +
                   ms(double(d.opPoolWallNs[i])) + ",\"busy_fraction\":" +
                   ratio(double(d.opPoolBusyNs[i]), double(d.opPoolThreadNs[i])) + "}";
    opsPool += "}";
    // What the ops took beyond their round trips ran on the driving thread
    // alone (small ops, and each op's set-up). The pool's other round trips
    // (the scheduler sampling a step's rows) are outside the ops.
    const std::string pool =
        "{\"round_trips_per_step\":" + jsonNumber(double(p.roundTrips) * per) +
        ",\"in_round_trips_ms\":" + ms(double(p.wallNs)) +
        ",\"driving_thread_alone_ms\":" + ms(opsNs - opsPoolWallNs) +
        ",\"busy_fraction\":" + ratio(double(p.busyNs), double(p.threadNs)) +
        ",\"idle_thread_ms\":" + ms(double(p.threadNs) - double(p.busyNs)) +
        ",\"mean_round_trip_us\":" + ratio(double(p.wallNs) * 1e-3, double(p.roundTrips)) +
        ",\"mean_wake_us\":" + ratio(double(p.wakeNs) * 1e-3, double(p.wakes)) +
        ",\"mean_tail_us\":" + ratio(double(p.tailNs) * 1e-3, double(p.roundTrips)) + "}";
    const double wallNs = wallSeconds * 1e9;
    return "{\"steps\":" + std::to_string(steps) + ",\"forward_passes\":" + std::to_string(d.steps) +
           ",\"step_ms\":" + ms(wallNs) + ",\"forward_ms\":" + ms(double(d.forwardNs)) +
           ",\"outside_forward_ms\":" + ms(wallNs - double(d.forwardNs)) + ",\"ops_ms\":" + ops +
           ",\"ops_pool\":" + opsPool +
           ",\"between_ops_ms\":" + ms(double(d.forwardNs) - opsNs) + ",\"pool\":" + pool + "}";
}

} // namespace weir::cli
