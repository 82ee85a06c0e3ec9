#include "ssh/keygen/keygen_known_hosts.hpp"

#include "common/keys/key_lines.hpp"
#include "common/match.hpp"
#include "common/text_parse.hpp"
#include "common/temp_name.hpp"
#include "ssh/keygen/keygen_files.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace longhaul {

namespace {

// A bound on what is read (OpenSSH reads line by line, unbounded).
constexpr std::size_t max_known_hosts_file = 256u << 20;

enum class host_marker { none, cert_authority, revoked, error };

// check_markers: "@cert-authority" or "@revoked" and the blanks after it.
host_marker read_marker(std::string_view& cp)
{
    host_marker m = host_marker::none;
    while (!cp.empty() && cp.front() == '@') {
        if (m != host_marker::none)
            return host_marker::error;
        const auto sp = cp.find_first_of(" \t");
        if (sp == std::string_view::npos || sp < 2 || sp >= 32)
            return host_marker::error;
        const std::string_view word = cp.substr(0, sp);
        if (word == "@cert-authority")
            m = host_marker::cert_authority;
        else if (word == "@revoked")
            m = host_marker::revoked;
        else
            return host_marker::error;
        cp.remove_prefix(sp);
        while (!cp.empty() && is_blank(cp.front()))
            cp.remove_prefix(1);
    }
    return m;
}

// match_maybe_hashed: 1 match, 0 none, -1 a hashed name that is malformed.
int match_names(std::string_view host, std::string_view names)
{
    if (!names.empty() && names.front() == '|') {
        if (!parse_hashed_host(names))
            return -1;
        return hashed_host_matches(names, host) ? 1 : 0;
    }
    return match_hostname(host, names) == list_match::positive ? 1 : 0;
}

// sshkey_type_from_name, for the quick check of lines whose key is not
// parsed: every name OpenSSH knows, key and certificate, and the short
// names it also accepts (case-insensitively).
bool known_key_type(std::string_view name)
{
    static constexpr std::array<std::string_view, 20> names = {
        "ssh-ed25519", "ssh-rsa", "ssh-dss", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
        "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com", "rsa-sha2-256", "rsa-sha2-512",
        "ssh-ed25519-cert-v01@openssh.com", "ssh-rsa-cert-v01@openssh.com", "ssh-dss-cert-v01@openssh.com",
        "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp384-cert-v01@openssh.com",
        "ecdsa-sha2-nistp521-cert-v01@openssh.com", "sk-ssh-ed25519-cert-v01@openssh.com",
        "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", "rsa-sha2-256-cert-v01@openssh.com",
        "rsa-sha2-512-cert-v01@openssh.com"};
    static constexpr std::array<std::string_view, 10> short_names = {
        "RSA", "DSA", "ECDSA", "ED25519", "ECDSA-SK", "ED25519-SK", "RSA-CERT", "DSA-CERT", "ECDSA-CERT", "ED25519-CERT"};
    for (auto n : names)
        if (n == name)
            return true;
    for (auto n : short_names)
        if (iequals(n, name))
            return true;
    return false;
}

// One line as hostkeys_foreach sees it.
struct host_line {
    std::string_view text; // without its newline
    unsigned long number = 0;
    host_marker marker = host_marker::none;
    std::string_view hosts;
    std::string_view rawkey;   // from the key type to the end
    bool comment = false;      // blank or '#'
    bool matched = false;
    bool invalid = false;
    std::optional<public_key_line> key; // with -l
};

class known_hosts_editor {
public:
    known_hosts_editor(const known_hosts_request& rq, random_source& rng) : rq_(rq), rng_(rng) {}

    known_hosts_result run(std::string_view contents)
    {
        unsigned long number = 0;
        while (!contents.empty()) {
            const auto nl = contents.find('\n');
            const std::string_view text = contents.substr(0, nl);
            contents = nl == std::string_view::npos ? std::string_view{} : contents.substr(nl + 1);
            visit(text, ++number);
        }
        return std::move(r_);
    }

private:
    bool want_match() const noexcept { return rq_.action == known_hosts_action::find; }
    bool with_host() const noexcept { return rq_.action != known_hosts_action::hash; }

    // Lines of the new file (-R, -H) or of -F's output.
    void write(std::string_view s)
    {
        std::string& out = rq_.action == known_hosts_action::find ? r_.printed : r_.file;
        out.append(s);
        out.push_back('\n');
    }
    std::string where(const host_line& l) const { return rq_.path + ":" + std::to_string(l.number); }

    void visit(std::string_view text, unsigned long number)
    {
        host_line l;
        l.text = text;
        l.number = number;
        std::string_view cp = text;
        while (!cp.empty() && is_blank(cp.front()))
            cp.remove_prefix(1);
        if (cp.empty() || cp.front() == '#') {
            l.comment = true;
            if (!want_match())
                handle(l);
            return;
        }
        l.marker = read_marker(cp);
        if (l.marker == host_marker::error) {
            if (!want_match())
                invalid(l);
            return;
        }
        const auto end = cp.find_first_of(" \t");
        l.hosts = cp.substr(0, end);
        cp = end == std::string_view::npos ? std::string_view{} : cp.substr(end + 1);
        if (with_host()) {
            const int m = match_names(rq_.host, l.hosts);
            if (m < 0)
                return invalid(l);
            l.matched = m == 1;
            if (want_match() && !l.matched)
                return;
        }
        while (!cp.empty() && is_blank(cp.front()))
            cp.remove_prefix(1);
        if (cp.empty() || cp.front() == '#')
            return invalid(l);
        l.rawkey = cp;
        if (rq_.print_fingerprint) {
            auto key = parse_public_key_line(cp);
            if (!key)
                return invalid(l);
            l.key = std::move(*key);
        } else {
            const auto type_end = cp.find_first_of(" \t");
            if (type_end == std::string_view::npos || type_end <= 1 || type_end >= 128)
                return invalid(l);
            const std::string_view type = cp.substr(0, type_end);
            std::string_view after = cp.substr(type_end);
            while (!after.empty() && is_blank(after.front()))
                after.remove_prefix(1);
            if (!known_key_type(type) || after.empty() || after.front() == '#')
                return invalid(l);
        }
        handle(l);
    }

    void invalid(host_line& l)
    {
        l.invalid = true;
        handle(l);
    }

    void handle(const host_line& l)
    {
        if (rq_.action == known_hosts_action::hash)
            hash(l);
        else
            find_or_remove(l);
    }

    // known_hosts_hash
    void hash(const host_line& l)
    {
        if (l.invalid) {
            r_.invalid = true;
            r_.notes.push_back(where(l) + ": invalid line");
            return write(l.text);
        }
        if (l.comment)
            return write(l.text);
        const bool wild = l.hosts.find_first_of("*?!") != std::string_view::npos;
        const bool hashed = !l.hosts.empty() && l.hosts.front() == '|';
        if (hashed || wild || l.marker != host_marker::none) {
            write(l.text);
            if (wild && rq_.action == known_hosts_action::hash) // not for -F -H
                r_.notes.push_back(where(l) + ": ignoring host name with wildcard: " +
                                   std::string(l.hosts.substr(0, 64)));
            return;
        }
        std::string_view names = l.hosts;
        while (!names.empty()) {
            const auto comma = names.find(',');
            const std::string_view name = names.substr(0, comma);
            if (name.empty())
                break; // strsep's empty field ends the list
            write(hash_known_host(lowercase(name), rng_) + " " + std::string(l.rawkey));
            r_.has_unhashed = true;
            names = comma == std::string_view::npos ? std::string_view{} : names.substr(comma + 1);
        }
    }

    // known_hosts_find_delete
    void find_or_remove(const host_line& l)
    {
        const bool remove = rq_.action == known_hosts_action::remove;
        if (l.matched && !l.invalid) {
            if (remove) {
                if (l.marker != host_marker::none)
                    return write(l.text); // CA and revocation lines stay
                r_.found = true;
                if (!rq_.quiet)
                    r_.printed.append("# Host " + rq_.host + " found: line " + std::to_string(l.number) + "\n");
                return; // removed: not written
            }
            r_.found = true;
            if (!rq_.quiet)
                write("# Host " + rq_.host + " found: line " + std::to_string(l.number) + " " +
                      (l.marker == host_marker::cert_authority ? "CA"
                       : l.marker == host_marker::revoked      ? "REVOKED"
                                                               : ""));
            if (rq_.hash_found)
                return hash(l);
            if (rq_.print_fingerprint && l.key) {
                write(rq_.host + " " + std::string(key_type_short_name(l.key->key.type())) + " " +
                      key_fingerprint(l.key->key, rq_.fingerprint) + (l.key->comment.empty() ? "" : " ") +
                      l.key->comment);
                if (rq_.randomart)
                    write(key_randomart(l.key->key, rq_.fingerprint));
                return;
            }
            return write(l.text);
        }
        if (remove) {
            if (l.invalid) {
                r_.invalid = true;
                r_.notes.push_back(where(l) + ": invalid line");
            }
            write(l.text);
        }
    }

    const known_hosts_request& rq_;
    random_source& rng_;
    known_hosts_result r_;
};

} // namespace

known_hosts_result edit_known_hosts(std::string_view contents, const known_hosts_request& request,
                                    random_source& rng)
{
    return known_hosts_editor(request, rng).run(contents);
}

int keygen_known_hosts(const keygen_options& o, known_hosts_request rq)
{
    using keygen::fatal;
    const std::string path = o.file ? *o.file : keygen::me().home + "/.ssh/known_hosts";
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        fatal("Cannot stat " + path + ": " + std::strerror(errno));
    rq.path = path;
    std::string text;
    int e = 0;
    if (!keygen::read_capped(path, max_known_hosts_file, text, e))
        fatal("do_known_hosts: hostkeys_foreach: " + std::string(e == EFBIG ? "string too large" : std::strerror(e)));
    system_random rng;
    const known_hosts_result r = edit_known_hosts(text, rq, rng);
    std::fputs(r.printed.c_str(), stdout);
    std::fflush(stdout);
    auto note = [](const std::string& line) { std::fprintf(stderr, "%s\r\n", line.c_str()); };
    for (const auto& n : r.notes)
        note(n);
    const bool in_place = rq.action != known_hosts_action::find;
    if (r.invalid) {
        note(path + " is not a valid known_hosts file.");
        if (in_place)
            note("Not replacing existing known_hosts file because of errors");
        return 1;
    }
    if (rq.action == known_hosts_action::remove && !r.found) {
        note("Host " + rq.host + " not found in " + path);
        return 0;
    }
    if (in_place) {
        // The new file beside the old, then the old kept as .old and the
        // new one renamed into place, as OpenSSH does.
        std::string tmp = fill_temp_template(path + ".XXXXXXXXXX");
        ::umask(077);
        const int fd = ::mkstemp(tmp.data());
        if (fd == -1)
            fatal(std::string("mkstemp: ") + std::strerror(errno));
        (void)::fchmod(fd, st.st_mode & 0644);
        std::string_view rest = r.file;
        while (!rest.empty()) {
            const ssize_t n = ::write(fd, rest.data(), rest.size());
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            rest.remove_prefix(static_cast<std::size_t>(n));
        }
        const int write_errno = errno;
        if (::close(fd) != 0 || !rest.empty()) {
            ::unlink(tmp.c_str());
            fatal(std::string("write: ") + std::strerror(write_errno));
        }
        const std::string old = path + ".old";
        if (::unlink(old.c_str()) == -1 && errno != ENOENT)
            fatal("unlink " + old + ": " + std::strerror(errno));
        if (::link(path.c_str(), old.c_str()) == -1)
            fatal("link " + path + " to " + old + ": " + std::strerror(errno));
        if (::rename(tmp.c_str(), path.c_str()) == -1) {
            note("rename\"" + tmp + "\" to \"" + path + "\": " + std::strerror(errno));
            ::unlink(tmp.c_str());
            ::unlink(old.c_str());
            return 1;
        }
        std::printf("%s updated.\n", path.c_str());
        std::printf("Original contents retained as %s\n", old.c_str());
        std::fflush(stdout);
        if (r.has_unhashed) {
            note("WARNING: " + old + " contains unhashed entries");
            note("Delete this file to ensure privacy of hostnames");
        }
    }
    return rq.action == known_hosts_action::find && !r.found ? 1 : 0;
}

} // namespace longhaul
