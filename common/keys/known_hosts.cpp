#include "common/keys/known_hosts.hpp"

#include "common/file_read.hpp"
#include "common/match.hpp"
#include "common/text_parse.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace longhaul {

namespace {

// known_hosts files are read whole; anything larger is not a known_hosts file.
constexpr std::size_t max_known_hosts_size = 64u << 20;

std::optional<std::string> read_whole_file(const std::string& path, int& err)
{
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        err = errno;
        return std::nullopt;
    }
    std::string text;
    err = read_to_end(fd, max_known_hosts_size, text);
    close(fd);
    if (err == EFBIG)
        return std::nullopt;
    return text;
}

// Calls fn(linenum, line) for every line of `text`, without the newline.
template <class Fn>
void for_each_known_hosts_line(std::string_view text, Fn&& fn)
{
    unsigned long linenum = 0;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++linenum;
        line = line.substr(0, line.find('\0'));
        fn(linenum, line);
    }
}

// The host field of a line (after an optional marker), or empty for blank,
// comment and marker-only lines.
std::string_view host_field(std::string_view line)
{
    std::size_t i = 0;
    while (i < line.size() && is_blank(line[i]))
        ++i;
    if (i >= line.size() || line[i] == '#' || line[i] == '\r')
        return {};
    if (line[i] == '@') {
        while (i < line.size() && !is_blank(line[i]))
            ++i;
        while (i < line.size() && is_blank(line[i]))
            ++i;
    }
    std::size_t end = i;
    while (end < line.size() && !is_blank(line[end]))
        ++end;
    return line.substr(i, end - i);
}

std::string tilde_unexpand(const std::string& path, std::string_view home)
{
    // Only on a path boundary: "/home/al" must not turn "/home/alice/x" into "~/ice/x".
    if (home.empty() || path.empty() || path[0] != '/' || path.compare(0, home.size(), home) != 0)
        return path;
    std::size_t l = home.size();
    if (home.back() != '/' && (path.size() <= l || path[l] != '/'))
        return path;
    if (l < path.size() && path[l] == '/')
        ++l;
    return "~/" + path.substr(l);
}

} // namespace

std::string known_hosts_name(std::string_view host, int port, const std::optional<std::string>& alias)
{
    if (alias)
        return *alias;
    if (port == 0 || port == 22)
        return std::string(host);
    return "[" + std::string(host) + "]:" + std::to_string(port);
}

bool known_hosts_field_matches(std::string_view field, std::string_view name)
{
    if (!field.empty() && field[0] == '|')
        return hashed_host_matches(field, name);
    return match_hostname(name, field) == list_match::positive;
}

void known_host_keys::load_file(std::string_view name, const std::string& path, const log_sink& log)
{
    int err = 0;
    auto text = read_whole_file(path, err);
    if (!text) {
        if (log)
            log(log_level::debug1, "load_hostkeys: fopen " + path + ": " + std::strerror(err));
        return;
    }
    load_text(name, *text, path, log);
}

void known_host_keys::load_text(std::string_view name, std::string_view text, std::string_view path, const log_sink& log)
{
    std::size_t loaded = 0;
    for_each_known_hosts_line(text, [&](unsigned long linenum, std::string_view line) {
        const auto field = host_field(line);
        if (field.empty() || !known_hosts_field_matches(field, name))
            return;
        auto parsed = parse_known_hosts_line(line);
        if (!parsed) {
            if (log)
                log(log_level::debug1,
                    std::string(path) + ":" + std::to_string(linenum) + ": parse error in hostkeys file");
            return;
        }
        known_host_entry e;
        e.file = std::string(path);
        e.line = linenum;
        e.hosts = std::move(parsed->hosts);
        e.marker = parsed->marker;
        e.key = std::move(parsed->key);
        e.lookup_name = std::string(name);
        if (log)
            log(log_level::debug3,
                std::string("record_hostkey: found ") +
                    (e.marker == known_hosts_marker::none            ? ""
                     : e.marker == known_hosts_marker::cert_authority ? "ca "
                                                                      : "revoked ") +
                    "key type " + std::string(key_type_label(e.key)) + " in file " + e.file + ":" +
                    std::to_string(e.line));
        entries_.push_back(std::move(e));
        ++loaded;
    });
    if (loaded != 0 && log)
        log(log_level::debug3, "load_hostkeys_file: loaded " + std::to_string(loaded) + " keys from " + std::string(name));
}

host_key_status known_host_keys::check(const public_key& key, const known_host_entry** found) const
{
    host_key_status status = host_key_status::not_found;
    const known_host_entry* hit = nullptr;
    for (const auto& e : entries_) {
        if (e.marker != known_hosts_marker::none)
            continue;
        if (e.key == key) {
            status = host_key_status::ok;
            hit = &e;
            break;
        }
        // A key of any type that differs: OpenSSH calls the host "changed".
        status = host_key_status::changed;
        hit = &e;
    }
    for (const auto& e : entries_) {
        if (e.marker == known_hosts_marker::revoked && e.key == key) {
            status = host_key_status::revoked;
            hit = nullptr;
            break;
        }
    }
    if (found != nullptr)
        *found = hit;
    return status;
}

host_key_status known_host_keys::check_certificate(const certificate& cert, const known_host_entry** found) const
{
    host_key_status status = host_key_status::not_found;
    const known_host_entry* hit = nullptr;
    for (const auto& e : entries_) {
        if (e.marker == known_hosts_marker::cert_authority && e.key == cert.signature_key()) {
            status = host_key_status::ok;
            hit = &e;
            break;
        }
    }
    for (const auto& e : entries_) {
        if (e.marker == known_hosts_marker::revoked && (e.key == cert.key() || e.key == cert.signature_key())) {
            status = host_key_status::revoked;
            hit = nullptr;
            break;
        }
    }
    if (found != nullptr)
        *found = hit;
    return status;
}

const known_host_entry* known_host_keys::find_type(key_type type) const
{
    for (const auto& e : entries_)
        if (e.marker == known_hosts_marker::none && e.key.type() == type)
            return &e;
    return nullptr;
}

bool known_host_keys::has_cert_authority() const
{
    for (const auto& e : entries_)
        if (e.marker == known_hosts_marker::cert_authority)
            return true;
    return false;
}

std::vector<std::string> other_names_for_key(const public_key& key, std::string_view host_name,
                                             const std::vector<std::string>& files, std::string_view home,
                                             const log_sink& log)
{
    std::vector<std::string> names;
    for (const auto& path : files) {
        int err = 0;
        auto text = read_whole_file(path, err);
        if (!text) {
            if (log)
                log(log_level::debug1, "hostkeys_find_by_key_hostfile: hostkeys file " + path + " does not exist");
            continue;
        }
        for_each_known_hosts_line(*text, [&](unsigned long linenum, std::string_view line) {
            const auto field = host_field(line);
            if (field.empty() || known_hosts_field_matches(field, host_name))
                return;
            auto parsed = parse_known_hosts_line(line);
            if (!parsed || parsed->marker != known_hosts_marker::none || !(parsed->key == key))
                return;
            const std::string shown = tilde_unexpand(path, home);
            names.push_back(shown + ":" + std::to_string(linenum) + ": " +
                            (parsed->hosts.rfind("|1|", 0) == 0 ? std::string("[hashed name]") : parsed->hosts));
        });
    }
    return names;
}

std::string_view key_type_label(const public_key& key) noexcept { return key_type_short_name(key.type()); }

} // namespace longhaul
