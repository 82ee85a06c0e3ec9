// proc_stats: the /proc scans behind cpu_between and vm_hwm_kb
// (proc_stats.hpp).
#include "proc_stats.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace forward_load {
namespace {

// The roots and every process below them.
std::set<int> tree_of(const std::map<int, proc_sample>& procs, const std::vector<int>& roots)
{
    std::multimap<int, int> children;
    for (const auto& [pid, s] : procs)
        children.emplace(s.ppid, pid);
    std::set<int> seen;
    std::vector<int> todo;
    for (const int r : roots)
        if (procs.count(r) != 0)
            todo.push_back(r);
    while (!todo.empty()) {
        const int p = todo.back();
        todo.pop_back();
        if (!seen.insert(p).second)
            continue;
        auto [a, b] = children.equal_range(p);
        for (auto it = a; it != b; ++it)
            todo.push_back(it->second);
    }
    return seen;
}

}  // namespace

std::map<int, proc_sample> scan_proc()
{
    std::map<int, proc_sample> out;
    DIR* d = opendir("/proc");
    if (d == nullptr)
        return out;
    while (dirent* e = readdir(d)) {
        char* end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0')
            continue;
        std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
        std::string line;
        if (!std::getline(f, line))
            continue;
        // The command name may hold spaces and parentheses: fields start
        // after the last ')'.
        const auto close = line.rfind(')');
        if (close == std::string::npos)
            continue;
        std::istringstream rest(line.substr(close + 2));
        std::string state;
        long long field = 0;
        proc_sample s;
        rest >> state >> s.ppid;  // fields 3 and 4
        // Fields 5..13 (pgrp .. cmajflt), then 14 utime and 15 stime.
        for (int k = 5; k <= 13; ++k)
            rest >> field;
        unsigned long long utime = 0, stime = 0;
        rest >> utime >> stime;
        if (!rest)
            continue;
        s.ticks = utime + stime;
        out[static_cast<int>(pid)] = s;
    }
    closedir(d);
    return out;
}

cpu_figure cpu_between(const std::map<int, proc_sample>& before, const std::map<int, proc_sample>& after,
                       const std::vector<int>& roots)
{
    const double ms_per_tick = 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
    cpu_figure f;
    const auto was = tree_of(before, roots);
    const auto now = tree_of(after, roots);
    for (const int pid : now) {
        const auto a = after.at(pid).ticks;
        const auto it = before.find(pid);
        const std::uint64_t b = (it != before.end() && was.count(pid) != 0) ? it->second.ticks : 0;
        f.ms += static_cast<double>(a >= b ? a - b : 0) * ms_per_tick;
        ++f.procs;
    }
    for (const int pid : was)
        if (now.count(pid) == 0)
            ++f.lost;
    return f;
}

long vm_hwm_kb(int pid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmHWM:", 0) == 0)
            return std::strtol(line.c_str() + 6, nullptr, 10);
    return -1;
}

}  // namespace forward_load
