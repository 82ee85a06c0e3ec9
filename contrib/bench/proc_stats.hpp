// proc_stats: CPU ticks and peak memory of other processes from /proc, for
// the SSH client's, server's and echo server's cost of a forward_load run.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace forward_load {

struct proc_sample {
    std::uint64_t ticks = 0;  // utime + stime
    int ppid = 0;
};

// Every process's parent and CPU ticks, from /proc/PID/stat.
std::map<int, proc_sample> scan_proc();

// CPU of a group of process trees between two scans. A process that
// appeared in between counts from zero; one that exited in between is lost
// (the figure is then a lower bound: `lost` says how many).
struct cpu_figure {
    double ms = 0;
    int procs = 0;
    int lost = 0;
};

// The CPU of `roots` and every process below them between the scans.
cpu_figure cpu_between(const std::map<int, proc_sample>& before, const std::map<int, proc_sample>& after,
                       const std::vector<int>& roots);

// The VmHWM (peak resident set) of pid in KiB, -1 when unknown.
long vm_hwm_kb(int pid);

}  // namespace forward_load
