#include "sshd/hostbased_auth.hpp"

#include "common/file_read.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/keys/known_hosts.hpp"
#include "common/auth/auth_common.hpp"
#include "sshd/revoked_keys.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>

namespace longhaul {

namespace {

// OpenSSH reads these files line by line into 1024 bytes (RBUFLN): a longer
// line is read as several, each judged on its own.
constexpr std::size_t rbufln = 1024;
// An equiv or rhosts file is a short list; more than this is not one.
constexpr std::size_t max_hosts_file = 16u << 20;

bool is_scanf_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// Up to three whitespace-separated words, as sscanf("%s %s %s") finds them.
std::size_t words(std::string_view s, std::array<std::string_view, 3>& out)
{
    std::size_t n = 0, i = 0;
    while (n < out.size()) {
        while (i < s.size() && is_scanf_space(s[i]))
            ++i;
        if (i == s.size())
            break;
        const std::size_t start = i;
        while (i < s.size() && !is_scanf_space(s[i]))
            ++i;
        out[n++] = s.substr(start, i - start);
    }
    return n;
}

bool in_netgroup(std::string_view group, const char* host, const char* user)
{
    const std::string g(group);
    return ::innetgr(g.c_str(), host, user, nullptr) == 1;
}

// Every line is made printable: the client's host and user names (and so
// the name looked up with HostbasedUsesNameFromPacketOnly) are its own
// text, and must not start a line of their own in the log.
void note(hostbased_verdict& v, syslog_level level, std::string_view text)
{
    v.log.push_back({level, sanitize_peer_text(text, false)});
}

// check_rhosts_file(): the file must open without blocking and be a
// regular file; unreadable or missing, it allows nothing.
bool rhosts_file_allows(const std::string& path, std::string_view hostname, std::string_view ipaddr,
                        std::string_view client_user, const user_account& server_user, hostbased_verdict& v)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd == -1)
        return false;
    struct stat st {};
    if (::fstat(fd, &st) == -1) {
        ::close(fd);
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        note(v, syslog_level::info, "User " + server_user.name + " hosts file " + path + " is not a regular file");
        ::close(fd);
        return false;
    }
    std::string text;
    const int err = read_to_end(fd, max_hosts_file, text);
    ::close(fd);
    if (err != 0)
        return false;
    std::vector<std::string> notes;
    const bool ok = rhosts_text_allows(text, hostname, ipaddr, client_user, server_user.name, path, &notes);
    for (auto& n : notes)
        note(v, syslog_level::debug1, std::move(n));
    return ok;
}

// Owned by root or the user, and writable by neither group nor others.
bool owner_and_modes_ok(const struct stat& st, uid_t uid) { return (st.st_uid == 0 || st.st_uid == uid) && (st.st_mode & 022) == 0; }

// auth_rhosts2(): the system files first (not for root), then the user's
// .shosts and .rhosts, read as the user, unless IgnoreRhosts says not to.
bool auth_rhosts2(const server_config& c, const hostbased_query& q, const std::string& hostname,
                  const std::string& ipaddr, const hostbased_files& files, hostbased_verdict& v)
{
    const user_account& pw = *q.user;
    note(v, syslog_level::debug2,
         "auth_rhosts2: clientuser " + q.client_user + " hostname " + hostname + " ipaddr " + ipaddr);
    static constexpr std::array<const char*, 2> rhosts_files{".shosts", ".rhosts"};
    struct stat st {};
    bool user_file = false;
    {
        temporary_identity as_user(pw, *q.groups);
        for (const char* f : rhosts_files)
            if (::stat((pw.home + "/" + f).c_str(), &st) == 0) {
                user_file = true;
                break;
            }
    }
    // Nothing to read: no lookups at all.
    if (!user_file && ::stat(files.hosts_equiv.c_str(), &st) == -1 && ::stat(files.shosts_equiv.c_str(), &st) == -1) {
        note(v, syslog_level::debug3, "auth_rhosts2: no hosts access files exist");
        return false;
    }
    if (pw.uid == 0) {
        note(v, syslog_level::debug3, "auth_rhosts2: root user, ignoring system hosts files");
    } else {
        for (const auto* equiv : {&files.hosts_equiv, &files.shosts_equiv}) {
            if (rhosts_file_allows(*equiv, hostname, ipaddr, q.client_user, pw, v)) {
                note(v, syslog_level::debug1, "Accepted for " + hostname + " [" + ipaddr + "] by " + *equiv + ".");
                return true;
            }
        }
    }
    if (::stat(pw.home.c_str(), &st) == -1) {
        note(v, syslog_level::info,
             "Rhosts authentication refused for " + pw.name + ": no home directory " + pw.home);
        return false;
    }
    if (c.strict_modes && !owner_and_modes_ok(st, pw.uid)) {
        note(v, syslog_level::info,
             "Rhosts authentication refused for " + pw.name + ": bad ownership or modes for home directory.");
        return false;
    }
    temporary_identity as_user(pw, *q.groups);
    for (const char* f : rhosts_files) {
        const std::string path = pw.home + "/" + f;
        if (::stat(path.c_str(), &st) == -1) {
            note(v, syslog_level::debug3, "auth_rhosts2: stat " + path + ": " + std::strerror(errno));
            continue;
        }
        if (c.strict_modes && !owner_and_modes_ok(st, pw.uid)) {
            note(v, syslog_level::info, "Rhosts authentication refused for " + pw.name + ": bad modes for " + path);
            continue;
        }
        if (c.ignore_rhosts == ignore_rhosts_mode::yes ||
            (c.ignore_rhosts == ignore_rhosts_mode::shosts_only && std::strcmp(f, ".shosts") != 0)) {
            note(v, syslog_level::debug1, std::string("Server has been configured to ignore ") + f + ".");
            continue;
        }
        if (rhosts_file_allows(path, hostname, ipaddr, q.client_user, pw, v)) {
            note(v, syslog_level::debug1, std::string("Accepted by ") + f + ".");
            return true;
        }
    }
    return false;
}

// check_key_in_hostfiles(): the system file as root, the user's (when
// given) as the user, skipped with StrictModes when others could write it.
host_key_status key_in_host_files(const server_config& c, const hostbased_query& q, const std::string& host,
                                  const std::string& system_file, const char* user_file, hostbased_verdict& v)
{
    const log_sink sink = [&v](log_level l, std::string_view text) {
        note(v, static_cast<syslog_level>(l), std::string(text));
    };
    known_host_keys known;
    known.load_file(host, system_file, sink);
    if (user_file != nullptr) {
        const std::string path = q.user->home + "/" + user_file;
        struct stat st {};
        if (c.strict_modes && ::stat(path.c_str(), &st) == 0 && !owner_and_modes_ok(st, q.user->uid)) {
            note(v, syslog_level::info,
                 "Authentication refused for " + q.user->name + ": bad owner or modes for " + path);
        } else {
            temporary_identity as_user(*q.user, *q.groups);
            known.load_file(host, path, sink);
        }
    }
    const known_host_entry* found = nullptr;
    const host_key_status status = q.cert ? known.check_certificate(*q.cert, &found) : known.check(*q.key, &found);
    if (status == host_key_status::revoked)
        note(v, syslog_level::error, "WARNING: revoked key for " + host + " attempted authentication");
    else if (status == host_key_status::ok)
        note(v, syslog_level::debug1,
             "check_key_in_hostfiles: key for " + host + " found at " + found->file + ":" + std::to_string(found->line));
    else
        note(v, syslog_level::debug1, "check_key_in_hostfiles: key for host " + host + " not found");
    return status;
}

} // namespace

bool rhosts_text_allows(std::string_view text, std::string_view hostname, std::string_view ipaddr,
                        std::string_view client_user, std::string_view server_user, std::string_view filename,
                        std::vector<std::string>* notes)
{
    const auto say = [&](std::string line) {
        if (notes != nullptr)
            notes->push_back(std::move(line));
    };
    const std::string file(truncated(filename, 100));
    while (!text.empty()) {
        // One fgets() into RBUFLN bytes: through the newline, or 1023 bytes.
        std::size_t len = std::min(text.find('\n'), rbufln - 2) + 1;
        len = std::min(len, text.size());
        std::string_view buf = text.substr(0, len);
        text.remove_prefix(len);
        buf = buf.substr(0, buf.find('\0')); // C string functions stop there
        std::size_t i = 0;
        while (i < buf.size() && (buf[i] == ' ' || buf[i] == '\t'))
            ++i;
        if (i == buf.size() || buf[i] == '#' || buf[i] == '\n')
            continue;
        // OSF/1's NO_PLUS: skipped (the plus syntax is never supported).
        if (buf.substr(i, 7) == "NO_PLUS")
            continue;
        std::array<std::string_view, 3> w;
        const std::size_t n = words(buf, w);
        if (n == 0)
            continue;
        if (n == 3) {
            say("Found garbage in " + file + ".");
            continue;
        }
        std::string_view host = w[0];
        std::string_view user = n == 2 ? w[1] : server_user;
        bool negated = false;
        if (host.front() == '-') {
            negated = true;
            host.remove_prefix(1);
        } else if (host.front() == '+') {
            host.remove_prefix(1);
        }
        if (!user.empty() && user.front() == '-') {
            negated = true;
            user.remove_prefix(1);
        } else if (!user.empty() && user.front() == '+') {
            user.remove_prefix(1);
        }
        // A lone '+' or '-': everyone, which is never honoured.
        if (host.empty() || user.empty()) {
            say("Ignoring wild host/user names in " + file + ".");
            continue;
        }
        const std::string host_s(hostname), ip_s(ipaddr), cuser_s(client_user);
        if (host.front() == '@') {
            if (!in_netgroup(host.substr(1), host_s.c_str(), nullptr) &&
                !in_netgroup(host.substr(1), ip_s.c_str(), nullptr))
                continue;
        } else if (::strcasecmp(std::string(host).c_str(), host_s.c_str()) != 0 && host != ipaddr) {
            continue;
        }
        if (user.front() == '@') {
            if (!in_netgroup(user.substr(1), nullptr, cuser_s.c_str()))
                continue;
        } else if (user != client_user) {
            continue;
        }
        if (negated) {
            say("Matched negative entry in " + file + ".");
            return false;
        }
        return true;
    }
    return false;
}

hostbased_verdict hostbased_key_allowed(const server_config& c, const hostbased_query& q, const hostbased_files& files)
{
    hostbased_verdict v;
    const public_key& key = *q.key;
    // RevokedKeys (a certificate by its serial, key ID or key, then its CA).
    if (!c.revoked_keys.empty()) {
        auto revoked = q.cert ? check_revoked_certificate(c.revoked_keys, *q.cert, c.fingerprint)
                              : check_revoked_key(c.revoked_keys, key, c.fingerprint);
        if (q.cert && !revoked.refused)
            revoked = check_revoked_key(c.revoked_keys, q.cert->signature_key(), c.fingerprint);
        v.log = std::move(revoked.log);
        if (revoked.refused)
            return v;
    }
    std::string chost = q.client_host;
    const std::string& resolved = q.remote_host;
    const std::string& ipaddr = q.remote_address;
    note(v, syslog_level::debug2,
         "hostbased_key_allowed: chost " + chost + " resolvedname " + resolved + " ipaddr " + ipaddr);
    if (!chost.empty() && chost.back() == '.') {
        note(v, syslog_level::debug3, "stripping trailing dot from chost " + chost);
        chost.pop_back();
    }
    std::string lookup;
    if (c.hostbased_uses_name_from_packet_only) {
        if (!auth_rhosts2(c, q, chost, chost, files, v)) {
            note(v, syslog_level::debug2, "hostbased_key_allowed: auth_rhosts2 refused user \"" +
                                              std::string(truncated(q.client_user, 100)) + "\" host \"" +
                                              std::string(truncated(chost, 100)) + "\" (from packet)");
            return v;
        }
        lookup = chost;
    } else {
        if (::strcasecmp(resolved.c_str(), chost.c_str()) != 0)
            note(v, syslog_level::info,
                 "userauth_hostbased mismatch: client sends " + chost + ", but we resolve " + ipaddr + " to " + resolved);
        if (!auth_rhosts2(c, q, resolved, ipaddr, files, v)) {
            note(v, syslog_level::debug2, "hostbased_key_allowed: auth_rhosts2 refused user \"" +
                                              std::string(truncated(q.client_user, 100)) + "\" host \"" +
                                              std::string(truncated(resolved, 100)) + "\" addr \"" +
                                              std::string(truncated(ipaddr, 100)) + "\"");
            return v;
        }
        lookup = resolved;
    }
    note(v, syslog_level::debug2, "hostbased_key_allowed: access allowed by auth_rhosts2");
    if (q.cert) {
        if (auto reason = check_authority(*q.cert, true, false, static_cast<std::uint64_t>(std::time(nullptr)), lookup)) {
            note(v, syslog_level::error, *reason);
            return v;
        }
    }
    const char* user_file = c.ignore_user_known_hosts ? nullptr : ".ssh/known_hosts";
    host_key_status status = key_in_host_files(c, q, lookup, files.system_known_hosts, user_file, v);
    // The older file names, when neither file knows the host at all.
    if (status == host_key_status::not_found)
        status = key_in_host_files(c, q, lookup, files.system_known_hosts2,
                                   c.ignore_user_known_hosts ? nullptr : ".ssh/known_hosts2", v);
    if (status != host_key_status::ok)
        return v;
    if (q.cert) {
        const public_key& ca = q.cert->signature_key();
        note(v, syslog_level::verbose,
             "Accepted certificate ID \"" + q.cert->key_id() + "\" signed by " +
                 std::string(key_type_short_name(ca.type())) + " CA " + key_fingerprint(ca, c.fingerprint) + " from " +
                 q.client_user + "@" + lookup);
    } else {
        note(v, syslog_level::verbose,
             "Accepted " + std::string(key_type_short_name(key.type())) + " public key " +
                 key_fingerprint(key, c.fingerprint) + " from " + q.client_user + "@" + lookup);
    }
    v.allowed = true;
    return v;
}

} // namespace longhaul
