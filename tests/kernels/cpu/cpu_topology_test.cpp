// The physical-core count behind --threads 0 (kernels/cpu/cpu_topology.h):
// SMT siblings count once, whatever file names the core, and a CPU without
// topology makes every CPU a core rather than guessing.
#include "tests/support/weir_test.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_topology.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/support/test_files.h"

using weir::kernels::countPhysicalCores;

namespace {

// cpuDir/cpuN/topology/<file> holding `siblings`.
bool writeTopology(const weirtest::TempDir& dir, int cpu, const char* file, const std::string& siblings) {
    const auto topo = dir.path() / ("cpu" + std::to_string(cpu)) / "topology";
    std::filesystem::create_directories(topo);
    return weirtest::writeFile(topo / file, siblings + "\n");
}

} // namespace

WEIR_TEST(CpuTopology, smtSiblingsCountOnce) {
    weirtest::TempDir dir;
    REQUIRE(dir.isValid());
    // Two cores of two hardware threads each, siblings numbered apart (0 with 2, 1 with 3).
    for (int cpu = 0; cpu < 4; ++cpu) REQUIRE(writeTopology(dir, cpu, "core_cpus_list", cpu % 2 ? "1,3" : "0,2"));
    const std::string root = dir.path().string();
    REQUIRE_EQ(countPhysicalCores(root, {0, 1, 2, 3}), 2);
    REQUIRE_EQ(countPhysicalCores(root, {0, 2}), 1);  // an affinity mask of one core's two threads
    REQUIRE_EQ(countPhysicalCores(root, {0, 1}), 2);
    REQUIRE_EQ(countPhysicalCores(root, {3}), 1);
}

WEIR_TEST(CpuTopology, olderKernelsNameSiblingsInThreadSiblingsList) {
    weirtest::TempDir dir;
    REQUIRE(dir.isValid());
    for (int cpu = 0; cpu < 4; ++cpu) REQUIRE(writeTopology(dir, cpu, "thread_siblings_list", cpu < 2 ? "0-1" : "2-3"));
    REQUIRE_EQ(countPhysicalCores(dir.path().string(), {0, 1, 2, 3}), 2);
}

WEIR_TEST(CpuTopology, missingTopologyCountsEveryCpu) {
    weirtest::TempDir dir;
    REQUIRE(dir.isValid());
    REQUIRE(writeTopology(dir, 0, "core_cpus_list", "0-1"));
    REQUIRE(writeTopology(dir, 1, "core_cpus_list", "0-1"));
    // cpu2 has no topology folder at all.
    REQUIRE_EQ(countPhysicalCores(dir.path().string(), {0, 1, 2}), 3);
    REQUIRE_EQ(countPhysicalCores(dir.path().string(), {0, 1}), 1);
}

WEIR_TEST(CpuTopology, thisMachineAndTheDefaultPool) {
    const int cores = weir::kernels::physicalCores();
    REQUIRE(cores >= 1);
    REQUIRE(cores <= weir::kernels::usableCpus());
    weir::kernels::ThreadPool pool;  // threads = 0: one per physical core
    REQUIRE_EQ(pool.size(), cores);
}

namespace {

// cpuDir/cpuN/nodeM, as sysfs links each CPU to its node (a folder here).
bool placeOnNode(const weirtest::TempDir& dir, int cpu, int node) {
    std::error_code ec;
    std::filesystem::create_directories(dir.path() / ("cpu" + std::to_string(cpu)) / ("node" + std::to_string(node)), ec);
    return !ec;
}

} // namespace

WEIR_TEST(CpuTopology, numaNodesOfTheCpusInUse) {
    weirtest::TempDir dir;
    REQUIRE(dir.isValid());
    // Two sockets: CPUs 0-3 on node 0, 4-7 on node 1; cpu 8 says nothing.
    for (int cpu = 0; cpu < 8; ++cpu) REQUIRE(placeOnNode(dir, cpu, cpu < 4 ? 0 : 1));
    REQUIRE(writeTopology(dir, 8, "core_cpus_list", "8"));
    const std::string root = dir.path().string();
    CHECK_EQ(weir::kernels::countNumaNodes(root, {0, 1, 2, 3, 4, 5, 6, 7}), 2);
    CHECK_EQ(weir::kernels::countNumaNodes(root, {4, 5}), 1);  // an affinity mask inside one node (numactl -N 1)
    CHECK_EQ(weir::kernels::countNumaNodes(root, {3, 4}), 2);
    // Unknown (no node links, or no such CPU folder): one node, not zero.
    CHECK_EQ(weir::kernels::countNumaNodes(root, {8}), 1);
    CHECK_EQ(weir::kernels::countNumaNodes(root, {42}), 1);
    CHECK_EQ(weir::kernels::countNumaNodes(root, {}), 1);
    // A folder named like a node but not one ("node" alone, "nodes") does not count.
    std::filesystem::create_directories(dir.path() / "cpu9" / "node");
    std::filesystem::create_directories(dir.path() / "cpu9" / "nodes");
    CHECK_EQ(weir::kernels::countNumaNodes(root, {9}), 1);
    CHECK_EQ(weir::kernels::countNumaNodes(root, {0, 9}), 1);
}

WEIR_TEST(CpuTopology, thisMachinesNumaNodes) {
    const int nodes = weir::kernels::numaNodes();
    std::printf("  this process runs on %d NUMA node(s)\n", nodes);
    CHECK(nodes >= 1);
    CHECK(nodes <= weir::kernels::usableCpus());
}
