#include "ssh/agent/agent_destination.hpp"

#include "common/match.hpp"
#include "common/wire.hpp"

#include <algorithm>

namespace longhaul::agent {

namespace {

// SSH2_MSG_USERAUTH_REQUEST.
constexpr std::uint8_t userauth_request_type = 50;

bool has_nul(std::string_view s) noexcept
{
    return s.find('\0') != std::string_view::npos;
}

// A key, or a certificate, as sshkey_froms accepts them.
bool parses_as_key(byte_span blob)
{
    auto key = public_key::from_blob(blob);
    if (key)
        return true;
    return key.error() == errc::unsupported && bool(certificate::from_blob(blob));
}

// sshkey_type_from_name: a key type or signature algorithm, plain or
// certificate.
bool known_algorithm(std::string_view name) noexcept
{
    return bool(key_type_for_signature_algorithm(name)) || is_certificate_algorithm(name);
}

result<dest_hop> parse_hop(byte_span data, std::string& error)
{
    wire_reader r(data);
    dest_hop hop;
    hop.user = std::string(r.text(max_hop_name));
    hop.hostname = std::string(r.text(max_hop_name));
    const byte_span reserved = r.string();
    if (!r.ok() || has_nul(hop.user) || has_nul(hop.hostname)) {
        error = "parse_dest_constraint_hop: parse";
        return errc::malformed;
    }
    if (!reserved.empty()) {
        error = "parse_dest_constraint_hop: unsupported extensions (len " + std::to_string(reserved.size()) + ")";
        return errc::unsupported;
    }
    while (r.remaining() > 0) {
        if (hop.keys.size() >= max_hop_keys) {
            error = "parse_dest_constraint_hop: too many keys";
            return errc::too_large;
        }
        const byte_span blob = r.string();
        const bool is_ca = r.u8() != 0;
        if (!r.ok()) {
            error = "parse_dest_constraint_hop: parse";
            return errc::malformed;
        }
        // Host keys and CA keys are plain keys (known_hosts holds no
        // certificates; OpenSSH would take one, which never matches).
        auto key = public_key::from_blob(blob);
        if (!key) {
            error = "parse_dest_constraint_hop: parse key";
            return errc::malformed;
        }
        hop.keys.push_back({std::move(*key), is_ca});
    }
    if (!r.ok()) {
        error = "parse_dest_constraint_hop: parse";
        return errc::malformed;
    }
    return hop;
}

result<dest_constraint> parse_one(byte_span data, std::string& error)
{
    wire_reader r(data);
    const byte_span from = r.string();
    const byte_span to = r.string();
    const byte_span reserved = r.string();
    if (!r.finish()) {
        error = "parse_dest_constraint: parse";
        return errc::malformed;
    }
    dest_constraint c;
    auto f = parse_hop(from, error);
    if (!f)
        return f.error();
    auto t = parse_hop(to, error);
    if (!t)
        return t.error();
    c.from = std::move(*f);
    c.to = std::move(*t);
    if (!reserved.empty()) {
        error = "parse_dest_constraint: unsupported extensions (len " + std::to_string(reserved.size()) + ")";
        return errc::unsupported;
    }
    if (c.from.hostname.empty() != c.from.keys.empty() || !c.from.user.empty()) {
        error = "parse_dest_constraint: inconsistent \"from\" specification";
        return errc::malformed;
    }
    if (c.to.hostname.empty() || c.to.keys.empty()) {
        error = "parse_dest_constraint: incomplete \"to\" specification";
        return errc::malformed;
    }
    return c;
}

// sshkey_cert_check_host(key, hostname, wildcard principals, the default
// CA signature algorithms): a host certificate, valid now, whose
// principals (patterns) include the hostname, or which names none.
bool certificate_valid_for_host(const certificate& cert, const std::string& hostname, std::uint64_t wall_now)
{
    if (check_authority(cert, true, false, wall_now, ""))
        return false;
    if (!cert.verify_signature())
        return false;
    const auto& p = cert.principals();
    return p.empty() ||
           std::any_of(p.begin(), p.end(), [&](const std::string& pat) { return match_pattern(hostname, pat); });
}

} // namespace

result<std::vector<dest_constraint>> parse_dest_constraints(wire_reader& r, std::string& error)
{
    const byte_span all = r.string();
    if (!r.ok()) {
        error = "parse restrict-destination-v00@openssh.com outer";
        return errc::malformed;
    }
    std::vector<dest_constraint> out;
    wire_reader list(all);
    while (list.remaining() > 0) {
        if (out.size() >= max_dest_constraints) {
            error = "too many restrict-destination-v00@openssh.com constraints";
            return errc::too_large;
        }
        const byte_span one = list.string();
        if (!list.ok())
            break;
        auto c = parse_one(one, error);
        if (!c)
            return c.error();
        out.push_back(std::move(*c));
    }
    if (!list.ok()) {
        error = "parse_dest_constraint: parse";
        return errc::malformed;
    }
    return out;
}

result<userauth_request> parse_userauth_request(byte_span data, byte_span expected_key_blob)
{
    wire_reader r(data);
    const byte_span sid = r.string();
    const std::uint8_t type = r.u8();
    const std::string_view user = r.text();
    const std::string_view service = r.text();
    const std::string_view method = r.text();
    const std::uint8_t sig_follows = r.u8();
    const std::string_view alg = r.text();
    const byte_span key = r.string();
    if (!r.ok() || sid.empty() || has_nul(user) || has_nul(service) || has_nul(method) || has_nul(alg))
        return errc::malformed;
    if (type != userauth_request_type || sig_follows != 1 || service != "ssh-connection" ||
        !std::ranges::equal(key, expected_key_blob) || !known_algorithm(alg))
        return errc::malformed;
    userauth_request out;
    if (method == "publickey-hostbound-v00@openssh.com") {
        const byte_span host = r.string();
        if (!r.ok() || !parses_as_key(host))
            return errc::malformed;
        out.host_key_blob = bytes(host.begin(), host.end());
    } else if (method != "publickey") {
        return errc::malformed;
    }
    if (!r.finish())
        return errc::malformed;
    out.user = std::string(user);
    out.session_id.assign(sid.begin(), sid.end());
    return out;
}

bool match_key_hop(const session_binding& host, const dest_hop& hop, std::uint64_t wall_now)
{
    // A certificate is checked against the hostname the hop names.
    const std::string hostname = hop.hostname.empty() ? "(ORIGIN)" : hop.hostname;
    for (const auto& k : hop.keys) {
        if (!host.host_cert) {
            if (k.is_ca || !(k.key == host.host_key))
                continue;
            return true;
        }
        if (!k.is_ca || !(host.host_cert->signature_key() == k.key))
            continue;
        if (!certificate_valid_for_host(*host.host_cert, hostname, wall_now))
            continue;
        return true;
    }
    return false;
}

bool permitted_by_dest_constraints(const session_binding* from, const session_binding* to,
                                   const std::vector<dest_constraint>& constraints, const std::string* user,
                                   std::uint64_t wall_now)
{
    for (const auto& d : constraints) {
        if (!from) {
            // The first hop: only a constraint from the origin.
            if (!d.from.hostname.empty() || !d.from.keys.empty())
                continue;
        } else if (!match_key_hop(*from, d.from, wall_now)) {
            continue;
        }
        if (to && !match_key_hop(*to, d.to, wall_now))
            continue;
        if (!d.to.user.empty() && user && !match_pattern(*user, d.to.user))
            continue;
        return true;
    }
    return false;
}

std::optional<refusal> identity_permitted(const std::vector<dest_constraint>& constraints,
                                          const connection_state& conn, const std::string* user,
                                          std::uint64_t wall_now)
{
    if (constraints.empty())
        return std::nullopt;
    const auto& b = conn.bindings;
    if (conn.bind_attempted && b.empty())
        return refusal{log_level::error, "identity_permitted: previous session bind failed on socket"};
    if (b.empty())
        return std::nullopt; // local use (ssh-add -l, -T)
    const session_binding* from = nullptr;
    for (std::size_t i = 0; i < b.size(); ++i) {
        const bool last = i + 1 == b.size();
        // The user can only be checked at the final hop, which must be
        // an authentication when signing.
        const std::string* test_user = nullptr;
        if (last) {
            test_user = user;
            if (b[i].forwarded && user)
                return refusal{log_level::error, "identity_permitted: tried to sign on forwarding hop"};
        } else if (!b[i].forwarded) {
            return refusal{log_level::error, "identity_permitted: tried to forward though signing bind"};
        }
        if (!permitted_by_dest_constraints(from, &b[i], constraints, test_user, wall_now))
            return refusal{log_level::debug2, "not permitted for this destination"};
        from = &b[i];
    }
    // Listing on a forwarded connection: hide keys usable to reach this
    // host but not beyond it.
    if (b.back().forwarded && !user && !permitted_by_dest_constraints(&b.back(), nullptr, constraints, nullptr, wall_now))
        return refusal{log_level::debug3, "identity_permitted: key permitted at host but not after"};
    return std::nullopt;
}

std::string describe(const dest_constraint& c)
{
    auto side = [](const dest_hop& h, const char* none) {
        std::string s = h.user.empty() ? "" : h.user + "@";
        s += h.hostname.empty() ? none : h.hostname;
        return s + " (" + std::to_string(h.keys.size()) + " keys)";
    };
    return side(c.from, "(ORIGIN)") + " > " + side(c.to, "(ANY)");
}

} // namespace longhaul::agent
