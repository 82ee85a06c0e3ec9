#include "ssh/scp/scp_legacy.hpp"
#include "ssh/scp/scp_legacy_io.hpp"

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

namespace legacy_io {

// Control characters (a newline in a name) shown escaped, as OpenSSH's
// strnvis(VIS_NL) and snmprintf do.
std::string visible(const std::string& s, bool keep_newline_last)
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

} // namespace legacy_io

using namespace legacy_io;

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

} // namespace longhaul::scp
