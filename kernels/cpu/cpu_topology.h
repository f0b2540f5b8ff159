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

// physicalCores()'s count for the CPU ids `cpus` under a sysfs CPU folder
// (normally /sys/devices/system/cpu): cpus.size() when a CPU's topology is
// missing. For tests.
int countPhysicalCores(const std::string& cpuDir, const std::vector<int>& cpus);

} // namespace weir::kernels
