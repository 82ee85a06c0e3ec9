// CPU time and peak memory of processes we did not start directly (sshd's
// per-connection children), read from /proc.
#include "meter.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unistd.h>

namespace wan_meter {

namespace {

// Parent of every process, from /proc/*/stat (this kernel has no
// /proc/PID/task/TID/children).
std::multimap<int, int> process_tree()
{
    std::multimap<int, int> by_parent;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string name = e.path().filename();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream f(e.path() / "stat");
        std::string line;
        if (!std::getline(f, line))
            continue;
        const auto close = line.rfind(')');
        if (close == std::string::npos || close + 4 >= line.size())
            continue;
        std::istringstream rest(line.substr(close + 2));
        std::string state;
        int ppid = 0;
        if (rest >> state >> ppid)
            by_parent.emplace(ppid, std::stoi(name));
    }
    return by_parent;
}

std::vector<int> children_of(int pid)
{
    std::vector<int> out;
    const auto tree = process_tree();
    auto [lo, hi] = tree.equal_range(pid);
    for (auto it = lo; it != hi; ++it)
        out.push_back(it->second);
    return out;
}

std::vector<int> descendants_of(int pid)
{
    const auto tree = process_tree();
    std::vector<int> out, todo{pid};
    while (!todo.empty()) {
        const int p = todo.back();
        todo.pop_back();
        auto [lo, hi] = tree.equal_range(p);
        for (auto it = lo; it != hi; ++it) {
            out.push_back(it->second);
            todo.push_back(it->second);
        }
    }
    return out;
}

// utime, stime, cutime, cstime in seconds; empty when the process is gone.
std::vector<double> cpu_fields(int pid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line))
        return {};
    // The command name may contain spaces: fields resume after the last ')'.
    const auto close = line.rfind(')');
    std::istringstream rest(line.substr(close + 2));
    std::vector<std::string> fields;
    std::string tok;
    while (rest >> tok)
        fields.push_back(tok);
    // fields[0] is field 3 (state); utime is field 14.
    if (fields.size() < 15)
        return {};
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    std::vector<double> v;
    for (int k = 11; k <= 14; ++k)
        v.push_back(std::stod(fields[k]) / tick);
    return v;
}

std::string status_field(int pid, const std::string& key)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line))
        if (line.compare(0, key.size() + 1, key + ":") == 0) {
            auto v = line.substr(key.size() + 1);
            v.erase(0, v.find_first_not_of(" \t"));
            return v;
        }
    return {};
}

volatile std::sig_atomic_t stop_watch = 0;

} // namespace

// cpu [--wait-children SECS] PID: the CPU PID used itself and collected from
// children it reaped. With --wait-children, first waits (bounded) until PID
// has no children left, so a finished connection's share is included.
int cmd_cpu(const args& a)
{
    double wait_s = 0;
    int pid = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] == "--wait-children" && i + 1 < a.size())
            wait_s = std::stod(a[++i]);
        else
            pid = std::stoi(a[i]);
    }
    if (pid <= 0)
        throw std::invalid_argument("cpu [--wait-children SECS] PID");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    while (wait_s > 0 && !children_of(pid).empty() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto v = cpu_fields(pid);
    if (v.empty())
        throw std::runtime_error("no process " + std::to_string(pid));
    std::printf("{\"user_s\": %.2f, \"sys_s\": %.2f, \"children_user_s\": %.2f, \"children_sys_s\": %.2f, "
                "\"total_s\": %.2f, \"children_left\": %zu}\n",
                v[0], v[1], v[2], v[3], v[0] + v[1] + v[2] + v[3], children_of(pid).size());
    return 0;
}

// watch PID [--exclude NAME]... [--interval-ms N]: samples the peak RSS
// (VmHWM) of every descendant of PID until SIGTERM/SIGINT, then prints the
// largest per program name. VmHWM is a high-water mark, so sampling misses
// nothing but a process that peaks and exits between two samples.
int cmd_watch(const args& a)
{
    int pid = 0;
    int interval_ms = 50;
    std::set<std::string> exclude;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] == "--exclude" && i + 1 < a.size())
            exclude.insert(a[++i]);
        else if (a[i] == "--interval-ms" && i + 1 < a.size())
            interval_ms = std::stoi(a[++i]);
        else
            pid = std::stoi(a[i]);
    }
    if (pid <= 0)
        throw std::invalid_argument("watch PID [--exclude NAME]... [--interval-ms N]");
    struct sigaction sa{};
    sa.sa_handler = [](int) { stop_watch = 1; };
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);

    std::map<std::string, long> peak_kb;
    while (!stop_watch && ::kill(pid, 0) == 0) {
        for (const int p : descendants_of(pid)) {
            const std::string name = status_field(p, "Name");
            const std::string hwm = status_field(p, "VmHWM");
            if (name.empty() || hwm.empty() || exclude.count(name))
                continue;
            long kb = std::stol(hwm);
            peak_kb[name] = std::max(peak_kb[name], kb);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    }
    std::printf("{");
    const char* sep = "";
    for (const auto& [name, kb] : peak_kb) {
        std::printf("%s\"%s\": %ld", sep, name.c_str(), kb);
        sep = ", ";
    }
    std::printf("}\n");
    return 0;
}

} // namespace wan_meter
