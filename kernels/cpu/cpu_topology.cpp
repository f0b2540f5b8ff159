#include "kernels/cpu/cpu_topology.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace weir::kernels {

namespace {

// The CPU ids in this process's affinity mask; empty where unknown.
std::vector<int> allowedCpus() {
    std::vector<int> cpus;
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
#endif
    return cpus;
}

int hardwareThreads() { return int(std::max(1u, std::thread::hardware_concurrency())); }

// The list of hardware threads sharing cpu's core ("0,8" or "0-1"): the same
// text for every sibling, so it names the core. Empty where unreadable.
std::string coreKey(const std::string& cpuDir, int cpu) {
    const std::string dir = cpuDir + "/cpu" + std::to_string(cpu) + "/topology/";
    for (const char* file : {"core_cpus_list", "thread_siblings_list"}) {  // the first is the newer name
        std::ifstream in(dir + file);
        std::string line;
        if (in && std::getline(in, line) && !line.empty()) return line;
    }
    return {};
}

} // namespace

int countPhysicalCores(const std::string& cpuDir, const std::vector<int>& cpus) {
    std::set<std::string> cores;
    for (int cpu : cpus) {
        std::string key = coreKey(cpuDir, cpu);
        if (key.empty()) return std::max<int>(1, int(cpus.size()));  // no topology (some containers): every CPU a core
        cores.insert(std::move(key));
    }
    return std::max<int>(1, int(cores.size()));
}

int countNumaNodes(const std::string& cpuDir, const std::vector<int>& cpus) {
    std::set<std::string> nodes;
    for (int cpu : cpus) {
        std::error_code ec;
        for (std::filesystem::directory_iterator it(cpuDir + "/cpu" + std::to_string(cpu), ec), end; !ec && it != end;
             it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (name.size() > 4 && name.compare(0, 4, "node") == 0 &&
                std::all_of(name.begin() + 4, name.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
                nodes.insert(name);
        }
    }
    return std::max<int>(1, int(nodes.size()));
}

int numaNodes() {
    static const int n = [] {
        const std::vector<int> cpus = allowedCpus();
        return cpus.empty() ? 1 : countNumaNodes("/sys/devices/system/cpu", cpus);
    }();
    return n;
}

int usableCpus() {
    static const int n = [] {
        const std::vector<int> cpus = allowedCpus();
        return cpus.empty() ? hardwareThreads() : int(cpus.size());
    }();
    return n;
}

int physicalCores() {
    static const int n = [] {
        const std::vector<int> cpus = allowedCpus();
        return cpus.empty() ? hardwareThreads() : countPhysicalCores("/sys/devices/system/cpu", cpus);
    }();
    return n;
}

} // namespace weir::kernels
