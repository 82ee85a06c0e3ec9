#include "ssh/algorithm_names.hpp"

#include "common/crypto/compression.hpp"
#include "common/crypto/packet_cipher.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/match.hpp"
#include "common/name_list.hpp"
#include "common/text_parse.hpp"
#include "common/transport/algorithms.hpp"


namespace longhaul {

namespace {

// OpenSSH 9.2's tables in `ssh -Q` order, and mlkem768x25519-sha256 where
// OpenSSH 9.9 added it. They are interface facts (which names a config may
// contain), not behaviour.
constexpr std::string_view openssh_ciphers =
    "3des-cbc,aes128-cbc,aes192-cbc,aes256-cbc,aes128-ctr,aes192-ctr,aes256-ctr,"
    "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com";
constexpr std::string_view openssh_macs =
    "hmac-sha1,hmac-sha1-96,hmac-sha2-256,hmac-sha2-512,hmac-md5,hmac-md5-96,umac-64@openssh.com,"
    "umac-128@openssh.com,hmac-sha1-etm@openssh.com,hmac-sha1-96-etm@openssh.com,"
    "hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-md5-etm@openssh.com,"
    "hmac-md5-96-etm@openssh.com,umac-64-etm@openssh.com,umac-128-etm@openssh.com";
constexpr std::string_view openssh_kex =
    "diffie-hellman-group1-sha1,diffie-hellman-group14-sha1,diffie-hellman-group14-sha256,"
    "diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group-exchange-sha1,"
    "diffie-hellman-group-exchange-sha256,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,"
    "curve25519-sha256,curve25519-sha256@libssh.org,sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,"
    "mlkem768x25519-sha256";
constexpr std::string_view openssh_keys =
    "ssh-ed25519,ssh-ed25519-cert-v01@openssh.com,sk-ssh-ed25519@openssh.com,"
    "sk-ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "ecdsa-sha2-nistp384,ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521,"
    "ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,"
    "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,webauthn-sk-ecdsa-sha2-nistp256@openssh.com,ssh-dss,"
    "ssh-dss-cert-v01@openssh.com,ssh-rsa,ssh-rsa-cert-v01@openssh.com,rsa-sha2-256,"
    "rsa-sha2-256-cert-v01@openssh.com,rsa-sha2-512,rsa-sha2-512-cert-v01@openssh.com";

// Key types this build has (security keys as identities, through a
// SecurityKeyProvider or an agent), in OpenSSH's listing order.
constexpr std::string_view our_key_types = "ssh-ed25519,sk-ssh-ed25519@openssh.com,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,"
                                           "ecdsa-sha2-nistp521,sk-ecdsa-sha2-nistp256@openssh.com,ssh-rsa";
// Every signature this build makes or checks, security keys' too: what a
// CA may have signed with (CASignatureAlgorithms), `ssh -Q sig`; OpenSSH's
// order.
constexpr std::string_view our_signatures_with_sk =
    "ssh-ed25519,sk-ssh-ed25519@openssh.com,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,"
    "sk-ecdsa-sha2-nistp256@openssh.com,ssh-rsa,rsa-sha2-256,rsa-sha2-512";
// HostKeyAlgorithms: our signatures and certificates, in OpenSSH's listing
// order; the default is OpenSSH 9.2's without security keys (no server
// has an sk host key, and the transport does not offer them).
constexpr std::string_view our_pubkey_algorithms =
    "ssh-ed25519,ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "ecdsa-sha2-nistp384,ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521,"
    "ecdsa-sha2-nistp521-cert-v01@openssh.com,ssh-rsa,ssh-rsa-cert-v01@openssh.com,rsa-sha2-256,"
    "rsa-sha2-256-cert-v01@openssh.com,rsa-sha2-512,rsa-sha2-512-cert-v01@openssh.com";
constexpr std::string_view default_pubkey_algorithms =
    "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
    "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,"
    "ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256";
// PubkeyAcceptedAlgorithms: the same plus security keys (signed through a
// SecurityKeyProvider or the agent) and their user certificates; the
// default is OpenSSH 9.2's, what Debian's ssh -G prints.
constexpr std::string_view our_user_key_algorithms =
    "ssh-ed25519,ssh-ed25519-cert-v01@openssh.com,sk-ssh-ed25519@openssh.com,"
    "sk-ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "ecdsa-sha2-nistp384,ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521,"
    "ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,"
    "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,ssh-rsa,ssh-rsa-cert-v01@openssh.com,rsa-sha2-256,"
    "rsa-sha2-256-cert-v01@openssh.com,rsa-sha2-512,rsa-sha2-512-cert-v01@openssh.com";
constexpr std::string_view default_user_key_algorithms =
    "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
    "sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,"
    "ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,"
    "rsa-sha2-512,rsa-sha2-256";

template <class Pred>
std::vector<std::string> filter(std::string_view list, Pred keep)
{
    std::vector<std::string> out;
    for (auto n : split_name_list(list))
        if (keep(n))
            out.emplace_back(n);
    return out;
}

std::string join(const std::vector<std::string>& v) { return join_name_list(v); }

bool supported_cipher(std::string_view n) { return n != "none" && find_cipher(n) != nullptr; }
bool supported_mac(std::string_view n) { return n != "none" && find_mac(n) != nullptr; }
bool supported_kex(std::string_view n) { return find_kex_method(n) != nullptr; }

// The elements OpenSSH's validators look at: everything up to the first
// empty element (their strsep loops stop there).
std::vector<std::string_view> leading_names(std::string_view list)
{
    std::vector<std::string_view> out;
    while (true) {
        auto comma = list.find(',');
        auto item = list.substr(0, comma);
        if (item.empty())
            break;
        out.push_back(item);
        if (comma == std::string_view::npos)
            break;
        list.remove_prefix(comma + 1);
    }
    return out;
}

bool exact_names_valid(std::string_view list, std::string_view known, std::string* bad)
{
    if (list.empty())
        return false;
    for (auto n : leading_names(list)) {
        if (!name_list_contains(known, n)) {
            if (bad != nullptr)
                *bad = std::string(n);
            return false;
        }
    }
    return true;
}

} // namespace

std::string_view openssh_cipher_names() noexcept { return openssh_ciphers; }
std::string_view openssh_mac_names() noexcept { return openssh_macs; }
std::string_view openssh_kex_names() noexcept { return openssh_kex; }
std::string_view openssh_key_algorithm_names() noexcept { return openssh_keys; }

std::string all_ciphers() { return join(filter(openssh_ciphers, supported_cipher)); }
std::string all_macs() { return join(filter(openssh_macs, supported_mac)); }
std::string all_kex_algorithms() { return join(filter(openssh_kex, supported_kex)); }
std::string all_signature_algorithms() { return std::string(our_signatures_with_sk); }
std::string all_pubkey_algorithms() { return std::string(our_user_key_algorithms); }

std::string default_client_ciphers() { return default_ciphers(); }
std::string default_client_macs() { return default_macs(); }
std::string default_client_kex_algorithms() { return default_kex_algorithms(); }
std::string default_client_key_algorithms() { return default_host_key_algorithms(); }
std::string default_ca_signature_algorithms() { return std::string(certificate::default_ca_signature_algorithms); }
std::string default_client_pubkey_algorithms() { return std::string(default_user_key_algorithms); }
// HostKeyAlgorithms: the same names as PubkeyAcceptedAlgorithms (OpenSSH's
// KEX_DEFAULT_PK_ALG serves both), host certificates first.
std::string all_host_key_algorithms() { return std::string(our_pubkey_algorithms); }
std::string default_client_host_key_algorithms() { return std::string(default_pubkey_algorithms); }

bool cipher_list_valid(std::string_view list) { return exact_names_valid(list, openssh_ciphers, nullptr); }
bool mac_list_valid(std::string_view list) { return exact_names_valid(list, openssh_macs, nullptr); }

bool kex_list_valid(std::string_view list, std::string& bad)
{
    bad.clear();
    return exact_names_valid(list, openssh_kex, &bad);
}

bool key_algorithm_list_valid(std::string_view list)
{
    if (list.empty())
        return false;
    const auto known = split_name_list(openssh_keys);
    for (auto pattern : leading_names(list)) {
        if (name_list_contains(openssh_keys, pattern))
            continue;
        // A pattern is accepted when it matches (or negates) some known name.
        bool matched = false;
        for (auto n : known) {
            if (match_pattern_list(n, pattern, false) != list_match::none) {
                matched = true;
                break;
            }
        }
        if (!matched)
            return false;
    }
    return true;
}

std::optional<std::vector<std::string>> query_algorithms(std::string_view what)
{
    auto ieq = [&](std::string_view name) { return iequals(what, name); };
    auto split = [](std::string_view list) {
        std::vector<std::string> out;
        for (auto n : split_name_list(list))
            out.emplace_back(n);
        return out;
    };
    if (what == "cipher" || ieq("Ciphers"))
        return split(all_ciphers());
    if (what == "cipher-auth")
        return filter(openssh_ciphers, [](std::string_view n) {
            const auto* c = find_cipher(n);
            return c != nullptr && n != "none" && c->aead;
        });
    if (what == "mac" || ieq("MACs"))
        return split(all_macs());
    if (what == "kex" || ieq("KexAlgorithms"))
        return split(all_kex_algorithms());
    // Key types, each followed by its certificate type, as OpenSSH lists
    // them (key), or one of the two kinds alone.
    if (what == "key" || what == "key-plain" || what == "key-cert") {
        std::vector<std::string> out;
        for (auto& name : split(our_key_types)) {
            auto cert = std::string(certificate_type_name(*key_type_from_name(name)));
            if (what != "key-cert")
                out.push_back(std::move(name));
            if (what != "key-plain")
                out.push_back(std::move(cert));
        }
        return out;
    }
    // What each setting accepts: a server's host key is never a security
    // key here (the transport does not offer them), a user's may be, and
    // host-based authentication takes the publickey list, as OpenSSH's.
    if (what == "key-sig" || ieq("PubkeyAcceptedKeyTypes") || ieq("PubkeyAcceptedAlgorithms") ||
        ieq("HostbasedKeyTypes") || ieq("HostbasedAcceptedKeyTypes") || ieq("HostbasedAcceptedAlgorithms"))
        return split(our_user_key_algorithms);
    if (ieq("HostKeyAlgorithms"))
        return split(our_pubkey_algorithms);
    if (what == "sig")
        return split(our_signatures_with_sk);
    if (what == "protocol-version")
        return std::vector<std::string>{"2"};
    if (what == "compression")
        return std::vector<std::string>{"none", "zlib@openssh.com", "zlib"};
    if (what == "help")
        return std::vector<std::string>{"cipher", "cipher-auth", "compression", "kex",           "key",
                                        "key-cert", "key-plain", "key-sig",    "mac", "protocol-version",
                                        "sig"};
    return std::nullopt;
}

} // namespace longhaul
