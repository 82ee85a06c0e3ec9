#include "common/log.hpp"

#include <fcntl.h>
#include <syslog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace longhaul {

std::optional<log_level> parse_log_level(std::string_view name)
{
    struct entry {
        std::string_view name;
        log_level level;
    };
    for (auto [n, l] : {entry{"QUIET", log_level::quiet}, {"FATAL", log_level::fatal}, {"ERROR", log_level::error},
                        {"INFO", log_level::info}, {"VERBOSE", log_level::verbose}, {"DEBUG", log_level::debug1},
                        {"DEBUG1", log_level::debug1}, {"DEBUG2", log_level::debug2}, {"DEBUG3", log_level::debug3}}) {
        if (n.size() == name.size() && strncasecmp(n.data(), name.data(), n.size()) == 0)
            return l;
    }
    return std::nullopt;
}

std::string_view log_level_name(log_level l)
{
    switch (l) {
    case log_level::quiet: return "QUIET";
    case log_level::fatal: return "FATAL";
    case log_level::error: return "ERROR";
    case log_level::info: return "INFO";
    case log_level::verbose: return "VERBOSE";
    case log_level::debug1: return "DEBUG1";
    case log_level::debug2: return "DEBUG2";
    case log_level::debug3: return "DEBUG3";
    }
    return "INFO";
}

logger::logger(std::string program, log_level level) : program_(std::move(program)), level_(level) {}

logger::~logger()
{
    if (file_ != nullptr)
        std::fclose(file_);
}

bool logger::to_file(const std::string& path)
{
    // Mode 0600 when made, as OpenSSH's log_redirect_stderr_to(): debug
    // output can hold what other users must not read.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    std::FILE* f = ::fdopen(fd, "a");
    if (f == nullptr) {
        const int e = errno;
        ::close(fd);
        errno = e;
        return false;
    }
    if (file_ != nullptr)
        std::fclose(file_);
    file_ = f;
    std::setvbuf(file_, nullptr, _IOLBF, 0);
    syslog_ = false;
    return true;
}

void logger::to_syslog(int facility)
{
    openlog(program_.c_str(), LOG_PID, facility);
    syslog_ = true;
}

void logger::to_stderr()
{
    syslog_ = false;
    sink_ = nullptr;
    if (file_ != nullptr)
        std::fclose(file_);
    file_ = nullptr;
}

void logger::to_function(std::function<void(log_level, std::string_view)> sink) { sink_ = std::move(sink); }

void logger::log(log_level l, std::string_view message)
{
    if (!enabled(l) || level_ == log_level::quiet)
        return;
    if (sink_) {
        sink_(l, message);
        return;
    }
    std::string_view prefix;
    switch (l) {
    case log_level::debug1: prefix = "debug1: "; break;
    case log_level::debug2: prefix = "debug2: "; break;
    case log_level::debug3: prefix = "debug3: "; break;
    default: break;
    }
    if (syslog_) {
        int pri = l <= log_level::error ? LOG_ERR : l <= log_level::verbose ? LOG_INFO : LOG_DEBUG;
        syslog(pri, "%.*s%.*s", static_cast<int>(prefix.size()), prefix.data(), static_cast<int>(message.size()),
               message.data());
        return;
    }
    std::string line;
    line.reserve(prefix.size() + message.size() + 2);
    // "\r\n" everywhere, as OpenSSH's log.c ends every line on stderr and
    // in -E files: right on a raw terminal, and what scripts that read
    // OpenSSH's messages see.
    line.append(prefix).append(message).append("\r\n");
    if (file_ != nullptr) {
        std::fwrite(line.data(), 1, line.size(), file_);
    } else {
        // One write() per line so concurrent writers do not interleave mid-line.
        (void)!::write(STDERR_FILENO, line.data(), line.size());
    }
}

} // namespace longhaul
