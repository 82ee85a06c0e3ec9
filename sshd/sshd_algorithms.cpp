#include "sshd/sshd_algorithms.hpp"

#include "common/crypto/packet_cipher.hpp"
#include "common/keys/certificate.hpp"
#include "common/match.hpp"
#include "common/name_list.hpp"
#include "common/transport/algorithms.hpp"
#include "common/transport/host_key_algorithms.hpp"

#include <vector>

namespace longhaul {

namespace {

// `ssh -Q cipher|mac|kex|HostKeyAlgorithms|sig` of Debian 12's OpenSSH.
constexpr std::string_view all_ciphers =
    "3des-cbc,aes128-cbc,aes192-cbc,aes256-cbc,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,"
    "aes256-gcm@openssh.com,chacha20-poly1305@openssh.com";
constexpr std::string_view all_macs =
    "hmac-sha1,hmac-sha1-96,hmac-sha2-256,hmac-sha2-512,hmac-md5,hmac-md5-96,umac-64@openssh.com,"
    "umac-128@openssh.com,hmac-sha1-etm@openssh.com,hmac-sha1-96-etm@openssh.com,hmac-sha2-256-etm@openssh.com,"
    "hmac-sha2-512-etm@openssh.com,hmac-md5-etm@openssh.com,hmac-md5-96-etm@openssh.com,umac-64-etm@openssh.com,"
    "umac-128-etm@openssh.com";
constexpr std::string_view all_kex =
    "diffie-hellman-group1-sha1,diffie-hellman-group14-sha1,diffie-hellman-group14-sha256,"
    "diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group-exchange-sha1,"
    "diffie-hellman-group-exchange-sha256,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,"
    "curve25519-sha256,curve25519-sha256@libssh.org,sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,"
    "mlkem768x25519-sha256";
constexpr std::string_view all_keys =
    "ssh-ed25519,ssh-ed25519-cert-v01@openssh.com,sk-ssh-ed25519@openssh.com,sk-ssh-ed25519-cert-v01@openssh.com,"
    "ecdsa-sha2-nistp256,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384,"
    "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
    "sk-ecdsa-sha2-nistp256@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "webauthn-sk-ecdsa-sha2-nistp256@openssh.com,ssh-dss,ssh-dss-cert-v01@openssh.com,ssh-rsa,"
    "ssh-rsa-cert-v01@openssh.com,rsa-sha2-256,rsa-sha2-256-cert-v01@openssh.com,rsa-sha2-512,"
    "rsa-sha2-512-cert-v01@openssh.com";
constexpr std::string_view all_sigs =
    "ssh-ed25519,sk-ssh-ed25519@openssh.com,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,"
    "sk-ecdsa-sha2-nistp256@openssh.com,webauthn-sk-ecdsa-sha2-nistp256@openssh.com,ssh-dss,ssh-rsa,rsa-sha2-256,"
    "rsa-sha2-512";

// OpenSSH 9.2's KEX_SERVER_* and KEX_DEFAULT_PK_ALG (what `sshd -T` prints
// with an empty configuration), with mlkem768x25519-sha256 first in the key
// exchange list as OpenSSH 9.9 put it (OpenSSH 10.1+ clients warn about a
// server that offers no post-quantum method).
constexpr std::string_view default_ciphers_list =
    "chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com";
constexpr std::string_view default_macs_list =
    "umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,"
    "hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1";
constexpr std::string_view default_kex_list =
    "mlkem768x25519-sha256,sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,"
    "curve25519-sha256@libssh.org,"
    "ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,"
    "diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256";
constexpr std::string_view default_keys_list =
    "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
    "sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,"
    "ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,"
    "rsa-sha2-512,rsa-sha2-256";

bool has_wildcard(std::string_view s) { return s.find_first_of("*?") != std::string_view::npos; }

std::string supported_list(sshd_algorithm_list kind)
{
    switch (kind) {
    case sshd_algorithm_list::cipher: return join_name_list(supported_ciphers());
    case sshd_algorithm_list::mac: return join_name_list(supported_macs());
    case sshd_algorithm_list::kex: return join_name_list(supported_kex_methods());
    case sshd_algorithm_list::key:
    case sshd_algorithm_list::ca_sig: return supported_host_key_algorithms();
    }
    return {};
}

// What sshd verifies in user authentication: the host key algorithms, and
// security keys (which cannot be host keys). A webauthn signature travels
// under the sk-ecdsa algorithm, so that name is not needed here.
std::string user_key_algorithms()
{
    return supported_list(sshd_algorithm_list::key) + ",sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com";
}

} // namespace

std::string_view openssh_default_algorithms(sshd_algorithm_list kind) noexcept
{
    switch (kind) {
    case sshd_algorithm_list::cipher: return default_ciphers_list;
    case sshd_algorithm_list::mac: return default_macs_list;
    case sshd_algorithm_list::kex: return default_kex_list;
    case sshd_algorithm_list::key: return default_keys_list;
    case sshd_algorithm_list::ca_sig: return certificate::default_ca_signature_algorithms;
    }
    return {};
}

std::string_view openssh_all_algorithms(sshd_algorithm_list kind) noexcept
{
    switch (kind) {
    case sshd_algorithm_list::cipher: return all_ciphers;
    case sshd_algorithm_list::mac: return all_macs;
    case sshd_algorithm_list::kex: return all_kex;
    case sshd_algorithm_list::key: return all_keys;
    case sshd_algorithm_list::ca_sig: return all_sigs;
    }
    return {};
}

bool sshd_algorithm_spec_valid(sshd_algorithm_list kind, std::string_view spec)
{
    if (!spec.empty() && spec[0] == '-')
        return true;
    if (!spec.empty() && (spec[0] == '+' || spec[0] == '^'))
        spec.remove_prefix(1);
    const auto all = openssh_all_algorithms(kind);
    const bool wildcards = kind == sshd_algorithm_list::key || kind == sshd_algorithm_list::ca_sig;
    // OpenSSH walks the list with strsep: an empty element (",,") is the end.
    std::size_t count = 0;
    while (true) {
        const auto comma = spec.find(',');
        const auto name = spec.substr(0, comma);
        if (name.empty())
            break;
        ++count;
        if (wildcards && has_wildcard(name)) {
            bool any = false;
            for (auto n : split_name_list(all))
                if (match_pattern_list(n, name, false) == list_match::positive)
                    any = true;
            if (!any)
                return false;
        } else if (!name_list_contains(all, name)) {
            return false;
        }
        if (comma == std::string_view::npos)
            break;
        spec.remove_prefix(comma + 1);
    }
    // kex_names_valid refuses an empty list; the others let it through to
    // the assembly, which then fails.
    return count > 0 || kind != sshd_algorithm_list::kex;
}

result<std::string> sshd_assemble_algorithms(sshd_algorithm_list kind, std::string_view spec)
{
    return assemble_algorithm_list(spec, openssh_default_algorithms(kind), openssh_all_algorithms(kind));
}

std::string sshd_supported_only(sshd_algorithm_list kind, std::string_view list)
{
    const std::string supported = supported_list(kind);
    std::vector<std::string_view> kept;
    for (auto n : split_name_list(list))
        if (name_list_contains(supported, n))
            kept.push_back(n);
    return join_name_list(kept);
}

std::string sshd_shown_host_key_algorithms(std::string_view list)
{
    const std::string plain = sshd_supported_only(sshd_algorithm_list::key, list);
    std::vector<std::string_view> kept;
    for (auto n : split_name_list(list))
        if (name_list_contains(plain, n) || supported_certificate_host_key_algorithm(n))
            kept.push_back(n);
    return join_name_list(kept);
}

std::string sshd_supported_pubkey_algorithms(std::string_view list)
{
    const std::string plain = user_key_algorithms();
    std::vector<std::string_view> kept;
    for (auto n : split_name_list(list)) {
        const auto sig = certificate_signature_algorithm(n);
        // A certificate algorithm is verified as its plain algorithm is.
        if (name_list_contains(plain, sig ? *sig : n))
            kept.push_back(n);
    }
    return join_name_list(kept);
}

std::string sshd_server_sig_algs(std::string_view pubkey_accepted)
{
    const std::string plain = user_key_algorithms();
    std::vector<std::string_view> kept;
    for (auto n : split_name_list(pubkey_accepted))
        if (name_list_contains(plain, n))
            kept.push_back(n);
    return join_name_list(kept);
}

} // namespace longhaul
