#include "ssh/scp/scp_legacy.hpp"
#include "ssh/scp/scp_legacy_io.hpp"

#include "ssh/sftp_client/text.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

// The receiving side of the legacy rcp protocol (scp -t, and scp -O's
// downloads): records from the peer, files and directories written here.
namespace longhaul::scp {

using sftp::strprintf;
using namespace legacy_io;

void legacy_peer::sink(const std::string& target, const std::string* src)
{
    std::vector<std::string> patterns;
    if (src != nullptr && !s_.recursive && s_.strict_names) {
        // Incoming names must match the last component of the request
        // (a hostile server cannot write other files); a brace pattern is
        // not expanded here, so it is not checked.
        const std::string pattern = last_component(*src);
        if (pattern.find('{') == std::string::npos && !pattern.empty())
            patterns.push_back(pattern);
    }
    if (s_.target_must_be_dir) {
        struct stat st{};
        const int e = ::stat(target.c_str(), &st) == -1 ? errno : (S_ISDIR(st.st_mode) ? 0 : ENOTDIR);
        if (e != 0) {
            run_err(target + ": " + std::strerror(e));
            throw legacy_exit{1};
        }
    }
    sink_one_level(target, patterns, true);
}

void legacy_peer::sink_one_level(const std::string& targ, const std::vector<std::string>& patterns,
                                 bool first_level)
{
    const mode_t mask = ::umask(0);
    if (!s_.preserve)
        ::umask(mask);
    auto screwup = [&](const char* why) {
        run_err(std::string("protocol error: ") + why);
        throw legacy_exit{1};
    };
    send_bytes("", 1, false);
    struct stat tst{};
    const bool targ_is_dir = ::stat(targ.c_str(), &tst) == 0 && S_ISDIR(tst.st_mode);
    bool setimes = false;
    struct timeval tv[2] = {};
    std::vector<char> buf(copy_buffer);
    for (bool first = first_level;; first = false) {
        std::string line;
        char ch = 0;
        if (!read_byte(ch))
            return;
        if (ch == '\n')
            screwup("unexpected <newline>");
        line += ch;
        do {
            if (!read_byte(ch))
                screwup("lost connection");
            line += ch;
        } while (line.size() < max_record - 1 && ch != '\n');
        if (s_.verbose > 0 && !s_.remote) {
            const std::string v = "Sink: " + visible(line, true);
            (void)write_all(STDERR_FILENO, v.data(), v.size());
        }
        if (line[0] == '\x01' || line[0] == '\x02') {
            if (!s_.remote) {
                std::string m = line.substr(1);
                if (!m.empty() && m.back() == '\n')
                    m.pop_back();
                m = visible(m) + "\n";
                (void)write_all(STDERR_FILENO, m.data(), m.size());
            }
            if (line[0] == '\x02')
                throw legacy_exit{1};
            ++errs_;
            continue;
        }
        if (line[0] == 'E') {
            send_bytes("", 1, false);
            return;
        }
        if (ch == '\n')
            line.pop_back();
        const char* cp = line.c_str();
        if (*cp == 'T') {
            ++cp;
            char* end = nullptr;
            if (!std::isdigit(static_cast<unsigned char>(*cp)))
                screwup("mtime.sec not present");
            unsigned long long ull = std::strtoull(cp, &end, 10);
            cp = end;
            if (*cp++ != ' ')
                screwup("mtime.sec not delimited");
            setimes = ull <= static_cast<unsigned long long>(LLONG_MAX);
            tv[1].tv_sec = time_t(ull);
            long usec = std::strtol(cp, &end, 10);
            cp = end;
            if (*cp++ != ' ' || usec < 0 || usec > 999999)
                screwup("mtime.usec not delimited");
            tv[1].tv_usec = usec;
            if (!std::isdigit(static_cast<unsigned char>(*cp)))
                screwup("atime.sec not present");
            ull = std::strtoull(cp, &end, 10);
            cp = end;
            if (*cp++ != ' ')
                screwup("atime.sec not delimited");
            if (ull > static_cast<unsigned long long>(LLONG_MAX))
                setimes = false;
            tv[0].tv_sec = time_t(ull);
            usec = std::strtol(cp, &end, 10);
            cp = end;
            if (*cp++ != '\0' || usec < 0 || usec > 999999)
                screwup("atime.usec not delimited");
            tv[0].tv_usec = usec;
            send_bytes("", 1, false);
            continue;
        }
        if (*cp != 'C' && *cp != 'D') {
            // "No match." from a remote shell, before scp ran: not a record.
            if (first) {
                run_err(visible(cp));
                throw legacy_exit{1};
            }
            screwup("expected control record");
        }
        const char kind = *cp;
        mode_t mode = 0;
        for (++cp; cp < line.c_str() + 5; ++cp) {
            if (*cp < '0' || *cp > '7')
                screwup("bad mode");
            mode = mode_t((mode << 3) | mode_t(*cp - '0'));
        }
        if (!s_.preserve)
            mode &= ~mask;
        if (*cp++ != ' ')
            screwup("mode not delimited");
        if (!std::isdigit(static_cast<unsigned char>(*cp)))
            screwup("size not present");
        char* end = nullptr;
        errno = 0;
        const unsigned long long ull = std::strtoull(cp, &end, 10);
        cp = end;
        if (*cp++ != ' ')
            screwup("size not delimited");
        if (errno == ERANGE || ull > static_cast<unsigned long long>(LLONG_MAX))
            screwup("size out of range");
        const off_t size = off_t(ull);
        const std::string name = cp;
        if (name.empty() || name.find('/') != std::string::npos || name == "..") {
            run_err("error: unexpected filename: " + visible(name));
            throw legacy_exit{1};
        }
        if (!patterns.empty()) {
            bool match = false;
            for (const auto& p : patterns)
                match = match || p == name || ::fnmatch(p.c_str(), name.c_str(), 0) == 0;
            if (!match)
                screwup("filename does not match request");
        }
        const std::string np = targ_is_dir ? targ + (targ == "/" ? "" : "/") + name : targ;
        struct stat est{};
        const bool exists = ::stat(np.c_str(), &est) == 0;
        if (kind == 'D') {
            bool mod_flag = s_.preserve;
            if (!s_.recursive)
                screwup("received directory without -r");
            if (exists) {
                if (!S_ISDIR(est.st_mode)) {
                    run_err(np + ": " + std::strerror(ENOTDIR));
                    continue;
                }
                if (s_.preserve)
                    (void)::chmod(np.c_str(), mode);
            } else {
                mod_flag = true;
                if (::mkdir(np.c_str(), mode | S_IRWXU) == -1) {
                    run_err(np + ": " + std::strerror(errno));
                    continue;
                }
            }
            sink_one_level(np, {}, false);
            if (setimes) {
                setimes = false;
                (void)::utimes(np.c_str(), tv);
            }
            if (mod_flag)
                (void)::chmod(np.c_str(), mode);
            continue;
        }
        const mode_t omode = mode;
        mode |= S_IWUSR;
        const int ofd = ::open(np.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, mode);
        if (ofd == -1) {
            run_err(np + ": " + std::strerror(errno));
            continue;
        }
        send_bytes("", 1, false);
        noted_.clear();
        auto note_err = [&](const std::string& m) {
            if (noted_.empty())
                noted_ = m;
        };
        progress_.store(0);
        if (s_.show_progress && !s_.remote)
            meter_.start(name, std::uint64_t(size), &progress_);
        bool wrerr = false;
        for (off_t i = 0; i < size;) {
            const std::size_t amt = std::size_t(std::min<off_t>(off_t(buf.size()), size - i));
            const std::size_t got = read_all(in_, buf.data(), amt);
            if (got != amt) {
                run_err(errno == EPIPE || errno == 0 ? "dropped connection" : std::strerror(errno));
                ::close(ofd);
                throw legacy_exit{1};
            }
            progress_.fetch_add(amt, std::memory_order_relaxed);
            throttle(amt);
            if (meter_.active())
                meter_.refresh();
            if (!wrerr && !write_all(ofd, buf.data(), amt)) {
                note_err(np + ": " + std::strerror(errno));
                wrerr = true;
            }
            i += off_t(amt);
        }
        if (!wrerr && (!exists || S_ISREG(est.st_mode)) && ::ftruncate(ofd, size) != 0)
            note_err(np + ": truncate: " + std::strerror(errno));
        if (s_.preserve) {
            if ((exists || omode != mode) && ::fchmod(ofd, omode) != 0)
                note_err(np + ": set mode: " + std::strerror(errno));
        } else if (!exists && omode != mode && ::fchmod(ofd, omode & ~mask) != 0) {
            note_err(np + ": set mode: " + std::strerror(errno));
        }
        if (::close(ofd) == -1)
            note_err(np + ": close: " + std::strerror(errno));
        (void)response();
        if (meter_.active())
            meter_.stop();
        if (setimes && !wrerr) {
            setimes = false;
            if (::utimes(np.c_str(), tv) == -1)
                note_err(np + ": set times: " + std::strerror(errno));
        }
        if (noted_.empty())
            send_bytes("", 1, false);
        else
            run_err(noted_);
    }
}

} // namespace longhaul::scp
