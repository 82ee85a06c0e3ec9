// The monitor's side of hostbased authentication, as OpenSSH's monitor
// serves MM_HOSTKEY: it parses the client host's key itself, checks it
// against HostbasedAuthentication and HostbasedAcceptedAlgorithms and the
// equiv, rhosts and known_hosts files (sshd/hostbased_auth), remembers the
// key (or host certificate) with the client host and user it was allowed
// for, and later verifies the signature only over a request for this
// session that names exactly those (monitor_valid_hostbasedblob).
#include "sshd/detail/server_connection.hpp"

#include "common/auth/auth_common.hpp"
#include "common/name_list.hpp"
#include "common/wire.hpp"
#include "sshd/certificate_auth.hpp"

#include <algorithm>

namespace longhaul::detail {

using namespace privsep;

std::string_view signed_method(byte_span signed_data)
{
    wire_reader r(signed_data);
    r.string();
    if (r.u8() != 50)
        return {};
    r.string();
    r.string();
    const std::string_view method = r.text();
    return r.ok() ? method : std::string_view{};
}

monitor_answer server_connection::monitor_host_allowed(byte_span msg)
{
    auto q = decode_host_allowed_request(msg);
    if (!q || !monitor_attempt(false))
        return violation();
    auto [cert, key] = parse_presented_key(q->key_blob);
    const certificate* cert_ptr = cert ? &*cert : nullptr;
    const server_auth_settings s = policy_.settings_for(policy_.user_config());
    const bool used = std::find(mon_.used_keys.begin(), mon_.used_keys.end(), q->key_blob) != mon_.used_keys.end();
    // A certificate's CA signature and its algorithm, checked here again:
    // the child's word is not taken for them.
    const bool cert_ok = !cert || (cert->verify_signature({cert->signature_algorithm()}) &&
                                   name_list_contains(s.ca_signature_algorithms, cert->signature_algorithm()));
    bool allowed = false;
    if (key && cert_ok && !used && mon_.lookup.status == user_status::valid && s.hostbased_authentication &&
        key_type_accepted(s.hostbased_accepted_algorithms, key->type(), cert.has_value()) && mon_.backend.host_allowed)
        allowed = mon_.backend.host_allowed(mon_.user, *key, cert_ptr, q->client_host, q->client_user);
    if (!allowed) {
        if (key)
            mon_.verdicts->failed(method_hostbased, "", &*key, s, cert_ptr,
                                  hostbased_failure_note(q->client_user, q->client_host));
        return reply(encode_verdict(monitor_type::host_allowed, false));
    }
    std::erase_if(mon_.allowed_hosts, [&](const monitor_state::allowed_host& h) { return h.blob == q->key_blob; });
    mon_.allowed_hosts.push_back({q->key_blob, q->client_host, q->client_user});
    return reply(encode_verdict(monitor_type::host_allowed, true));
}

monitor_answer server_connection::monitor_verify_hostbased(const verify_pubkey_request& q)
{
    const monitor_state::allowed_host* allowed = nullptr;
    for (const auto& h : mon_.allowed_hosts)
        if (h.blob == q.key_blob)
            allowed = &h;
    auto [cert, key] = parse_presented_key(q.key_blob);
    const certificate* cert_ptr = cert ? &*cert : nullptr;
    const bool used = std::find(mon_.used_keys.begin(), mon_.used_keys.end(), q.key_blob) != mon_.used_keys.end();
    const server_auth_settings s = policy_.settings_for(policy_.user_config());
    // A certificate signs with its key's plain algorithm.
    const auto sig_alg =
        cert ? certificate_signature_algorithm(q.algorithm) : std::optional(std::string_view(q.algorithm));
    if (allowed == nullptr || !key || used || !sig_alg ||
        !name_list_contains(s.hostbased_accepted_algorithms, q.algorithm)) {
        if (key)
            mon_.verdicts->failed(method_hostbased, "", &*key, s, cert_ptr);
        return monitor_attempt(true) ? reply(encode_verdict(monitor_type::verify_pubkey, false)) : violation();
    }
    wire_reader r(q.signed_data);
    const byte_span sid = r.string();
    const std::uint8_t type = r.u8();
    std::string_view user = r.text();
    const std::string_view service = r.text();
    const std::string_view method = r.text();
    const std::string_view alg = r.text();
    const byte_span blob = r.string();
    const std::string_view chost = r.text();
    const std::string_view cuser = r.text();
    user = user.substr(0, user.find(':'));
    const bool shape_ok = r.finish() && equal_constant_time(sid, mon_.session_id) && type == 50 &&
                          user == mon_.user && service == "ssh-connection" && method == method_hostbased &&
                          alg == q.algorithm && to_bytes(blob) == q.key_blob && chost == allowed->client_host &&
                          cuser == allowed->client_user;
    if (!shape_ok) {
        log_.error("monitor: hostbased signed data does not match this session [preauth]");
        return violation();
    }
    if (!key->verify(*sig_alg, q.signed_data, q.signature)) {
        mon_.verdicts->failed(method_hostbased, "", &*key, s, cert_ptr,
                              hostbased_failure_note(allowed->client_user, allowed->client_host));
        return monitor_attempt(true) ? reply(encode_verdict(monitor_type::verify_pubkey, false)) : violation();
    }
    mon_.used_keys.push_back(q.key_blob);
    authenticated_method m;
    m.method = std::string(method_hostbased);
    m.key = *key;
    m.cert = std::move(cert);
    mon_.successes.push_back(std::move(m));
    mon_.forced_command.push_back(false);
    monitor_log_success();
    return reply(encode_verdict(monitor_type::verify_pubkey, true));
}

} // namespace longhaul::detail
