#include "ssh/scp/scp_legacy.hpp"

#include "ssh/sftp_client/text.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

namespace longhaul::scp {

using sftp::strprintf;

namespace {

constexpr std::size_t copy_buffer = 256 * 1024;
constexpr mode_t file_mode_mask = S_ISUID | S_ISGID | S_IRWXU | S_IRWXG | S_IRWXO;
// A record line is at most this long (OpenSSH's 2048-byte buffer).
constexpr std::size_t max_record = 2048;

bool write_all(int fd, const void* p, std::size_t n)
{
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
        const ssize_t w = ::write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c += w;
        n -= std::size_t(w);
    }
    return true;
}

// Reads exactly n bytes (less only at EOF or an error).
std::size_t read_all(int fd, void* p, std::size_t n)
{
    char* c = static_cast<char*>(p);
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = ::read(fd, c + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += std::size_t(r);
    }
    return got;
}

// Control characters (a newline in a name) shown escaped, as OpenSSH's
// strnvis(VIS_NL) and snmprintf do.
std::string visible(const std::string& s, bool keep_newline_last = false)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '\n' && keep_newline_last && i + 1 == s.size()) {
            out += '\n';
        } else if (c == '\n') {
            out += "\\n";
        } else if (c < 0x20 && c != '\t') {
            out += strprintf("\\%03o", c);
        } else {
            out += char(c);
        }
    }
    return out;
}

void say(const std::string& s)
{
    (void)write_all(STDERR_FILENO, s.data(), s.size());
}

std::string last_component(const std::string& name)
{
    const auto slash = name.rfind('/');
    return slash == std::string::npos ? name : name.substr(slash + 1);
}

} // namespace

// What OpenSSH's scp does to a source name with a newline in it (a record
// is a line, so the name could not be sent as it is): the whole name is
// encoded as strnvis(VIS_NL) encodes it, into a PATH_MAX buffer, and that
// is the name that is sent, created by the sink and shown in messages.
// Graphic ASCII, space and tab stay (a backslash is doubled); any other
// byte becomes "\^X" for a control character (a newline is "\^J", DEL
// "\^?"), "\M-x" / "\M^X" for one with the high bit set, "\240" for
// 0xa0. A name without a newline is sent as it is, whatever it holds.
std::string legacy_wire_name(const std::string& name)
{
    if (name.find('\n') == std::string::npos)
        return name;
    std::string out;
    for (const char ch : name) {
        unsigned char c = static_cast<unsigned char>(ch);
        std::string enc;
        if ((c < 0x80 && std::isgraph(c)) || c == ' ' || c == '\t') {
            if (c == '\\')
                enc = "\\\\";
            else
                enc = std::string(1, char(c));
        } else if (c == 0xa0) {
            enc = "\\240";
        } else {
            enc = "\\";
            if (c & 0x80) {
                c &= 0x7f;
                enc += 'M';
            }
            if (c < 0x20 || c == 0x7f) {
                enc += '^';
                enc += c == 0x7f ? '?' : char(c + '@');
            } else {
                enc += '-';
                enc += char(c);
            }
        }
        // strnvis() stops at the first character that does not fit whole.
        if (out.size() + enc.size() > PATH_MAX - 1)
            break;
        out += enc;
    }
    return out;
}

bool legacy_utf8_environment()
{
    // OpenSSH's msetlocale(): the first of these that is set decides.
    for (const char* var : {"LC_ALL", "LC_CTYPE", "LANG"}) {
        const char* v = std::getenv(var);
        if (v == nullptr || *v == '\0')
            continue;
        std::string lower(v);
        for (auto& ch : lower)
            ch = char(std::tolower(static_cast<unsigned char>(ch)));
        return lower.find("utf-8") != std::string::npos || lower.find("utf8") != std::string::npos;
    }
    return false;
}

std::string legacy_stderr_text(const std::string& m, bool utf8)
{
    std::string out;
    for (std::size_t i = 0; i < m.size();) {
        const auto c = static_cast<unsigned char>(m[i]);
        if ((c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r') {
            out += char(c);
            ++i;
            continue;
        }
        if (utf8 && c >= 0xc2 && c <= 0xf4) {
            // One whole, shortest-form UTF-8 character, not a C1 control
            // or a surrogate: printed as it is.
            const std::size_t len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
            std::uint32_t cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
            bool ok = i + len <= m.size();
            for (std::size_t k = 1; ok && k < len; ++k) {
                const auto cc = static_cast<unsigned char>(m[i + k]);
                ok = (cc & 0xc0) == 0x80;
                cp = (cp << 6) | (cc & 0x3f);
            }
            const std::uint32_t least = len == 2 ? 0xa0 : len == 3 ? 0x800 : 0x10000;
            if (ok && cp >= least && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff)) {
                out.append(m, i, len);
                i += len;
                continue;
            }
        }
        out += strprintf("\\%03o", c);
        ++i;
    }
    return out;
}

legacy_peer::legacy_peer(int in_fd, int out_fd, legacy_settings s)
    : in_(in_fd), out_(out_fd), s_(s), utf8_(legacy_utf8_environment())
{
}

void legacy_peer::run_err(const std::string& m)
{
    ++errs_;
    if (s_.remote || out_ >= 0) {
        const std::string wire = std::string(1, '\x01') + "scp: " + m + "\n";
        (void)write_all(out_, wire.data(), wire.size());
    }
    if (!s_.remote) {
        const std::string line = legacy_stderr_text(m, utf8_) + "\n";
        (void)write_all(STDERR_FILENO, line.data(), line.size());
    }
}

void legacy_peer::lost_connection()
{
    if (!s_.remote) {
        static const char m[] = "lost connection\n";
        (void)write_all(STDERR_FILENO, m, sizeof m - 1);
    }
    throw legacy_exit{1};
}

bool legacy_peer::read_byte(char& c)
{
    return read_all(in_, &c, 1) == 1;
}

void legacy_peer::send(const std::string& s)
{
    if (!write_all(out_, s.data(), s.size()))
        lost_connection();
}

void legacy_peer::throttle(std::size_t n)
{
    if (s_.limit_bps == 0)
        return;
    const auto now = sftp::transfer_clock::now();
    if (paced_bytes_ == 0)
        pace_start_ = now;
    paced_bytes_ += n;
    const double due = double(paced_bytes_) * 8.0 / double(s_.limit_bps);
    const auto target = pace_start_ + std::chrono::duration_cast<sftp::transfer_clock::duration>(
                                          std::chrono::duration<double>(due));
    if (target > now)
        std::this_thread::sleep_for(target - now);
}

void legacy_peer::send_bytes(const void* p, std::size_t n, bool count_progress)
{
    if (!write_all(out_, p, n))
        lost_connection();
    if (count_progress)
        progress_.fetch_add(n, std::memory_order_relaxed);
    throttle(n);
    if (meter_.active())
        meter_.refresh();
}

int legacy_peer::response()
{
    char resp = 0;
    if (!read_byte(resp))
        lost_connection();
    if (resp == 0)
        return 0;
    std::string msg;
    if (resp != 1 && resp != 2)
        msg += resp;
    char ch = 0;
    do {
        if (!read_byte(ch))
            lost_connection();
        msg += ch;
    } while (msg.size() < max_record - 1 && ch != '\n');
    if (!s_.remote) {
        if (!msg.empty() && msg.back() == '\n')
            msg.pop_back();
        const std::string line = visible(msg) + "\n";
        (void)write_all(STDERR_FILENO, line.data(), line.size());
    }
    ++errs_;
    if (resp == 1)
        return -1;
    throw legacy_exit{1};
}

bool legacy_peer::do_times(const struct stat& st)
{
    const std::string t = strprintf("T%llu 0 %llu 0\n", static_cast<unsigned long long>(st.st_mtime < 0 ? 0 : st.st_mtime),
                                    static_cast<unsigned long long>(st.st_atime < 0 ? 0 : st.st_atime));
    if (s_.verbose > 0)
        say("File mtime " + std::to_string(st.st_mtime) + " atime " + std::to_string(st.st_atime) + "\n");
    send(t);
    return response() == 0;
}

void legacy_peer::source(const std::vector<std::string>& names)
{
    std::vector<char> buf(copy_buffer);
    for (std::string name : names) {
        while (name.size() > 1 && name.back() == '/')
            name.pop_back();
        const int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd == -1) {
            run_err(name + ": " + std::strerror(errno));
            continue;
        }
        // From here on, as OpenSSH's scp: the encoded name everywhere, even
        // to open a directory of -r (which then fails, as OpenSSH's does).
        name = legacy_wire_name(name);
        struct stat st{};
        if (::fstat(fd, &st) == -1) {
            run_err(name + ": " + std::strerror(errno));
            ::close(fd);
            continue;
        }
        std::unique_ptr<int, void (*)(int*)> closer(new int(fd), [](int* p) {
            if (*p >= 0)
                ::close(*p);
            delete p;
        });
        const int flags = ::fcntl(fd, F_GETFL);
        (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
        if (S_ISDIR(st.st_mode) && s_.recursive) {
            ::close(fd);
            *closer = -1;
            rsource(name, st);
            continue;
        }
        if (!S_ISREG(st.st_mode)) {
            run_err(name + ": not a regular file");
            continue;
        }
        const std::string last = last_component(name);
        if (s_.preserve && !do_times(st))
            continue;
        const std::string rec = strprintf("C%04o %lld %s\n", unsigned(st.st_mode & file_mode_mask),
                                          static_cast<long long>(st.st_size), last.c_str());
        if (s_.verbose > 0)
            say("Sending file modes: " + rec);
        send(rec);
        if (response() < 0)
            continue;
        progress_.store(0);
        if (s_.show_progress && !s_.remote)
            meter_.start(last, std::uint64_t(st.st_size), &progress_);
        int haderr = 0;
        for (off_t i = 0; i < st.st_size;) {
            std::size_t amt = std::size_t(std::min<off_t>(off_t(buf.size()), st.st_size - i));
            if (haderr == 0) {
                const std::size_t nr = read_all(fd, buf.data(), amt);
                if (nr != amt) {
                    haderr = errno != 0 ? errno : EIO;
                    std::memset(buf.data() + nr, 0, amt - nr);
                }
            } else {
                std::memset(buf.data(), 0, amt);
            }
            // Keep writing after an error, to stay in step with the sink.
            send_bytes(buf.data(), amt, haderr == 0);
            i += off_t(amt);
        }
        if (::close(fd) == -1 && haderr == 0)
            haderr = errno;
        *closer = -1;
        if (haderr == 0)
            send_bytes("", 1, false);
        else
            run_err(name + ": " + std::strerror(haderr));
        (void)response();
        if (meter_.active())
            meter_.stop();
    }
}

void legacy_peer::rsource(const std::string& name, const struct stat& st)
{
    DIR* dir = ::opendir(name.c_str());
    if (dir == nullptr) {
        run_err(name + ": " + std::strerror(errno));
        return;
    }
    std::unique_ptr<DIR, int (*)(DIR*)> closer(dir, ::closedir);
    const std::string last = last_component(name);
    if (s_.preserve && !do_times(st))
        return;
    const std::string rec = strprintf("D%04o %d %.1024s\n", unsigned(st.st_mode & file_mode_mask), 0, last.c_str());
    if (s_.verbose > 0)
        say("Entering directory: " + rec);
    send(rec);
    if (response() < 0)
        return;
    while (const dirent* dp = ::readdir(dir)) {
        if (dp->d_ino == 0 || std::strcmp(dp->d_name, ".") == 0 || std::strcmp(dp->d_name, "..") == 0)
            continue;
        if (name.size() + 1 + std::strlen(dp->d_name) >= PATH_MAX - 1) {
            run_err(name + "/" + dp->d_name + ": name too long");
            continue;
        }
        source({name + "/" + dp->d_name});
    }
    send("E\n");
    (void)response();
}

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
