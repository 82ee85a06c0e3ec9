// Completing a parsed layer: OpenSSH's fill_default_server_options (default
// ports and host keys, "none" values, algorithm lists), listen address
// resolution, and the list of settings this server does not honour yet.
#include "sshd/sshd_config_internal.hpp"

#include "common/name_list.hpp"
#include "common/transport/host_key_algorithms.hpp"
#include "common/text_parse.hpp"
#include "sshd/sshd_algorithms.hpp"

#include <netdb.h>

#include <cstring>

namespace longhaul::detail {

namespace {

void clear_none(std::string& s)
{
    if (iequals(s, "none"))
        s.clear();
}

std::string assemble(const spec_origin& origin, sshd_algorithm_list kind, bool supported_only, const char* keyword,
                     parse_log& log)
{
    auto list = sshd_assemble_algorithms(kind, origin.spec);
    if (!list || list->empty())
        log.fatal((origin.where.empty() ? std::string("[default]") : origin.where) + ": " + keyword + " '" +
                  origin.spec + "' leaves no algorithm");
    if (!supported_only)
        return *list;
    std::string ours = sshd_supported_only(kind, *list);
    if (ours.empty())
        log.fatal((origin.where.empty() ? std::string("[default]") : origin.where) + ": none of the " + keyword +
                  " in '" + *list + "' is implemented by this server");
    return ours;
}

// The certificate algorithms of an assembled HostKeyAlgorithms list that
// the transport implements, in the list's order.
std::string host_certificate_algorithms_of(std::string_view list)
{
    std::vector<std::string_view> out;
    for (auto n : split_name_list(list))
        if (supported_certificate_host_key_algorithm(n))
            out.push_back(n);
    return join_name_list(out);
}

void add_addresses(server_config& cfg, const std::string& host, int port, const std::string& rdomain, parse_log& log)
{
    addrinfo hints{};
    hints.ai_family = cfg.address_family == address_family_mode::inet    ? AF_INET
                      : cfg.address_family == address_family_mode::inet6 ? AF_INET6
                                                                          : AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = host.empty() ? AI_PASSIVE : 0;
    addrinfo* res = nullptr;
    const std::string port_text = std::to_string(port);
    const int r = getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints, &res);
    if (r != 0)
        log.fatal("bad addr or host: " + (host.empty() ? std::string("<NULL>") : host) + " (" + gai_strerror(r) + ")");
    // OpenSSH pushes each lookup's list onto a stack and prints it reversed:
    // within one ListenAddress the order is reversed, across them it is kept.
    std::vector<listen_address> found;
    for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
        listen_address la;
        if (ai->ai_addrlen > sizeof la.addr)
            continue;
        std::memcpy(&la.addr, ai->ai_addr, ai->ai_addrlen);
        la.addr_len = ai->ai_addrlen;
        char h[NI_MAXHOST], p[NI_MAXSERV];
        if (getnameinfo(ai->ai_addr, ai->ai_addrlen, h, sizeof h, p, sizeof p, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
            continue;
        la.host = h;
        la.port = std::atoi(p);
        la.rdomain = rdomain;
        found.push_back(std::move(la));
    }
    freeaddrinfo(res);
    cfg.listen_addresses.insert(cfg.listen_addresses.end(), found.rbegin(), found.rend());
}

} // namespace

void finalize_draft(config_draft& d, bool resolve, parse_log& log)
{
    server_config& c = d.cfg;
    if (c.ports.empty())
        c.ports.push_back(22);
    if (c.host_key_files.empty())
        c.host_key_files = {"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key"};
    for (auto* s : {&c.pid_file, &c.xauth_location, &c.banner, &c.trusted_user_ca_keys, &c.revoked_keys,
                    &c.security_key_provider, &c.authorized_principals_file, &c.force_command, &c.chroot_directory,
                    &c.host_key_agent, &c.authorized_keys_command, &c.authorized_principals_command})
        clear_none(*s);
    if (c.authentication_methods.size() == 1 && c.authentication_methods[0] == "any")
        c.authentication_methods.clear();

    c.ciphers = assemble(d.ciphers, sshd_algorithm_list::cipher, true, "Ciphers", log);
    c.macs = assemble(d.macs, sshd_algorithm_list::mac, true, "MACs", log);
    c.kex_algorithms = assemble(d.kex, sshd_algorithm_list::kex, true, "KexAlgorithms", log);
    c.host_key_algorithms = assemble(d.host_key_algorithms, sshd_algorithm_list::key, true, "HostKeyAlgorithms", log);
    const std::string host_keys_configured =
        assemble(d.host_key_algorithms, sshd_algorithm_list::key, false, "HostKeyAlgorithms", log);
    c.host_certificate_algorithms = host_certificate_algorithms_of(host_keys_configured);
    c.host_key_algorithms_shown = sshd_shown_host_key_algorithms(host_keys_configured);
    // User certificates are verified here, so their algorithms stay in.
    c.pubkey_accepted_algorithms = sshd_supported_pubkey_algorithms(
        assemble(d.pubkey_algorithms, sshd_algorithm_list::key, false, "PubkeyAcceptedAlgorithms", log));
    if (c.pubkey_accepted_algorithms.empty())
        log.fatal((d.pubkey_algorithms.where.empty() ? std::string("[default]") : d.pubkey_algorithms.where) +
                  ": none of the PubkeyAcceptedAlgorithms in '" + d.pubkey_algorithms.spec +
                  "' is implemented by this server");
    c.hostbased_accepted_algorithms =
        assemble(d.hostbased_algorithms, sshd_algorithm_list::key, false, "HostbasedAcceptedAlgorithms", log);
    c.ca_signature_algorithms = assemble(d.ca_algorithms, sshd_algorithm_list::ca_sig, false, "CASignatureAlgorithms", log);

    if (resolve) {
        c.listen_addresses.clear();
        if (d.listen.empty()) {
            for (int port : c.ports)
                add_addresses(c, {}, port, {}, log);
        } else {
            for (const auto& spec : d.listen) {
                if (spec.port > 0) {
                    add_addresses(c, spec.host, spec.port, spec.rdomain, log);
                } else {
                    for (int port : c.ports)
                        add_addresses(c, spec.host, port, spec.rdomain, log);
                }
            }
        }
    }
}

} // namespace longhaul::detail

namespace longhaul {

std::vector<std::string> unsupported_settings(const server_config& c)
{
    std::vector<std::string> out;
    auto note = [&](const std::string& setting, const char* effect) {
        out.push_back(setting + ": not supported yet, " + effect);
    };
    if (c.gssapi_authentication || c.gssapi_key_exchange)
        note("GSSAPIAuthentication/GSSAPIKeyExchange yes", "treated as no");
    if (c.kerberos_authentication)
        note("KerberosAuthentication yes", "treated as no");
    if (c.fingerprint != fingerprint_hash::sha256 && c.fingerprint != fingerprint_hash::md5)
        note("FingerprintHash", "SHA256 is used");
    return out;
}

} // namespace longhaul
