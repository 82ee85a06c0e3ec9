// Logging as OpenSSH does it: levels QUIET..DEBUG3, "debug1: " prefixes,
// to stderr, a file (-E) or syslog. One logger per program, passed around
// (no global); peer-supplied text must go through printable() first.
#pragma once

#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

enum class log_level { quiet, fatal, error, info, verbose, debug1, debug2, debug3 };

// "QUIET", "FATAL", "ERROR", "INFO", "VERBOSE", "DEBUG"(=DEBUG1), "DEBUG1".. "DEBUG3".
std::optional<log_level> parse_log_level(std::string_view name);
std::string_view log_level_name(log_level l);

// Receives what a library would log (errors, warnings, debug lines), one
// message per call without a newline; the program prints what its log
// level lets through. May be empty.
using log_sink = std::function<void(log_level, std::string_view)>;

class logger {
public:
    explicit logger(std::string program, log_level level = log_level::info);
    ~logger();
    logger(const logger&) = delete;
    logger& operator=(const logger&) = delete;

    void set_level(log_level l) noexcept { level_ = l; }
    log_level level() const noexcept { return level_; }
    bool enabled(log_level l) const noexcept { return l <= level_; }

    // Destinations. stderr is the default; a file replaces it (ssh -E, sshd -E);
    // syslog is sshd's default without -D -e.
    bool to_file(const std::string& path);
    void to_syslog(int facility);
    void to_stderr();
    bool on_stderr() const noexcept { return file_ == nullptr && !syslog_ && !sink_; }
    // Hands every line that passes the level to `sink` instead (sshd's
    // sandboxed pre-authentication child sends its lines to the monitor,
    // which logs them where sshd logs).
    void to_function(std::function<void(log_level, std::string_view)> sink);

    void log(log_level l, std::string_view message);
    void fatal(std::string_view m) { log(log_level::fatal, m); }
    void error(std::string_view m) { log(log_level::error, m); }
    void info(std::string_view m) { log(log_level::info, m); }
    void verbose(std::string_view m) { log(log_level::verbose, m); }
    void debug(std::string_view m) { log(log_level::debug1, m); }
    void debug2(std::string_view m) { log(log_level::debug2, m); }
    void debug3(std::string_view m) { log(log_level::debug3, m); }

private:
    std::string program_;
    log_level level_;
    std::FILE* file_ = nullptr;
    bool syslog_ = false;
    std::function<void(log_level, std::string_view)> sink_;
};

} // namespace longhaul
