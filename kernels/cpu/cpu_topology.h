#pragma once
// How many cores this process can run on. A decode step is bound by memory
// reads and by the pool's hand-offs, so two hardware threads of one core
// (SMT siblings) add little speed but another party to every hand-off: the
// default thread count is one per physical core.
#include <string>
#include <vector>

namespace weir::kernels {

// Physical cores among the CPUs this process may run on (its affinity mask,
// e.g. under taskset or a container's cpuset); SMT siblings count once.
// Falls back to usableCpus() where Linux's sysfs topology cannot be read.
// Computed once; at least 1.
int physicalCores();

// Hardware threads this process may run on (its affinity mask), else
// std::thread::hardware_concurrency(). Computed once; at least 1.
int usableCpus();

// NUMA nodes holding the CPUs this process may run on: 1 on most desktops;
// 2 or more on dual-socket workstations and on some many-core parts split
// into nodes, where memory first touched on one node is slower to read from
// the others. 1 where Linux's sysfs does not say. Computed once.
int numaNodes();

// numaNodes()'s count for the CPU ids `cpus` under a sysfs CPU folder (each
// cpuN folder holds a link nodeM to its node); 1 when none says. For tests.
int countNumaNodes(const std::string& cpuDir, const std::vector<int>& cpus);

// physicalCores()'s count for the CPU ids `cpus` under a sysfs CPU folder
// (normally /sys/devices/system/cpu): cpus.size() when a CPU's topology is
// missing. For tests.
int countPhysicalCores(const std::string& cpuDir, const std::vector<int>& cpus);

} // namespace weir::kernels
