#include "ssh/forward_spec.hpp"

#include "ssh/destination.hpp"

#include <cctype>
#include <cstring>
#include <optional>
#include <vector>

namespace longhaul {

namespace {

constexpr std::size_t max_host_length = 1025;   // NI_MAXHOST
constexpr std::size_t max_socket_path = 108;    // sizeof(sockaddr_un::sun_path)

struct field {
    std::string text;
    bool is_path = false;
};

// One field of a forwarding spec, advancing `s` past its ':' separator.
// nullopt at the end of the text or for a malformed bracketed field.
std::optional<field> next_field(std::string_view& s, bool& at_end, bool& malformed)
{
    if (s.empty()) {
        at_end = true;
        return std::nullopt;
    }
    field f;
    if (s[0] == '[') {
        // A bracketed field is literal (IPv6 addresses); it must be followed by ':' or the end.
        std::size_t i = 1;
        for (; i < s.size() && s[i] != ']'; ++i)
            if (s[i] == '/')
                f.is_path = true;
        if (i >= s.size() || (i + 1 < s.size() && s[i + 1] != ':')) {
            malformed = true;
            return std::nullopt;
        }
        f.text = std::string(s.substr(1, i - 1));
        s.remove_prefix(i + 1 < s.size() ? i + 2 : i + 1);
        return f;
    }
    std::size_t i = 0;
    for (; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '\\') {
            if (i + 1 >= s.size()) {
                malformed = true;
                return std::nullopt;
            }
            // The escaped character is taken literally: it neither ends the
            // field nor makes it a path.
            f.text.push_back(s[++i]);
            continue;
        }
        if (c == '/')
            f.is_path = true;
        if (c == ':')
            break;
        f.text.push_back(c);
    }
    s.remove_prefix(i < s.size() ? i + 1 : i);
    return f;
}

} // namespace

bool parse_forward(std::string_view spec, bool dynamic, bool remote, forward_spec& out, const env_lookup& env)
{
    std::string err;
    auto expanded = dollar_expand(spec, env, err);
    if (!expanded)
        return false;
    std::string_view s = *expanded;
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s[0])))
        s.remove_prefix(1);

    std::vector<field> fields;
    bool at_end = false, malformed = false;
    while (fields.size() < 4) {
        auto f = next_field(s, at_end, malformed);
        if (!f)
            break;
        fields.push_back(std::move(*f));
    }
    if (malformed || !s.empty())
        return false;

    forward_spec fwd;
    const auto& a = fields;
    switch (fields.size()) {
    case 1:
        if (a[0].is_path) {
            fwd.listen_path = a[0].text;
            fwd.listen_port = port_streamlocal;
        } else {
            fwd.listen_port = parse_port(a[0].text);
        }
        fwd.connect_host = "socks";
        break;
    case 2:
        if (a[0].is_path && a[1].is_path) {
            fwd.listen_path = a[0].text;
            fwd.listen_port = port_streamlocal;
            fwd.connect_path = a[1].text;
            fwd.connect_port = port_streamlocal;
        } else if (a[1].is_path) {
            fwd.listen_port = parse_port(a[0].text);
            fwd.connect_path = a[1].text;
            fwd.connect_port = port_streamlocal;
        } else {
            fwd.listen_host = a[0].text;
            fwd.listen_port = parse_port(a[1].text);
            fwd.connect_host = "socks";
        }
        break;
    case 3:
        if (a[0].is_path) {
            fwd.listen_path = a[0].text;
            fwd.listen_port = port_streamlocal;
            fwd.connect_host = a[1].text;
            fwd.connect_port = parse_port(a[2].text);
        } else if (a[2].is_path) {
            fwd.listen_host = a[0].text;
            fwd.listen_port = parse_port(a[1].text);
            fwd.connect_path = a[2].text;
            fwd.connect_port = port_streamlocal;
        } else {
            fwd.listen_port = parse_port(a[0].text);
            fwd.connect_host = a[1].text;
            fwd.connect_port = parse_port(a[2].text);
        }
        break;
    case 4:
        fwd.listen_host = a[0].text;
        fwd.listen_port = parse_port(a[1].text);
        fwd.connect_host = a[2].text;
        fwd.connect_port = parse_port(a[3].text);
        break;
    default:
        return false;
    }

    const std::size_t n = fields.size();
    if (dynamic) {
        if (n != 1 && n != 2)
            return false;
    } else {
        if (n != 3 && n != 4 && !fwd.connect_path && !fwd.listen_path)
            return false;
        if (fwd.connect_port <= 0 && !fwd.connect_path)
            return false;
    }
    if ((fwd.listen_port < 0 && !fwd.listen_path) || (!remote && fwd.listen_port == 0))
        return false;
    if ((fwd.connect_host && fwd.connect_host->size() >= max_host_length) ||
        (fwd.listen_host && fwd.listen_host->size() >= max_host_length) ||
        (fwd.connect_path && fwd.connect_path->size() >= max_socket_path) ||
        (fwd.listen_path && fwd.listen_path->size() >= max_socket_path))
        return false;
    out = std::move(fwd);
    return true;
}

} // namespace longhaul
