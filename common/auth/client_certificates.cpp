#include "common/auth/client_certificates.hpp"

#include "common/auth/agent_protocol.hpp"
#include "common/keys/key_lines.hpp"
#include "common/name_list.hpp"

#include <fstream>

namespace longhaul {

namespace {

// The RSA certificate algorithms in the order key_type_allowed_by_config
// tries them after the type name (ssh-rsa-cert-v01@openssh.com).
constexpr std::string_view rsa_sha2_cert_algorithms[] = {"rsa-sha2-512-cert-v01@openssh.com",
                                                         "rsa-sha2-256-cert-v01@openssh.com"};

} // namespace

std::string default_client_pubkey_accepted_algorithms()
{
    // OpenSSH 9.2's, security keys included (they sign through a
    // SecurityKeyProvider or the agent).
    return "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
           "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
           "sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,"
           "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,"
           "ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,"
           "rsa-sha2-512,rsa-sha2-256";
}

result<certificate> load_certificate_file(const std::filesystem::path& path)
{
    for (const auto& candidate : {path, std::filesystem::path(path.string() + ".pub")}) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(candidate, ec))
            continue;
        std::ifstream in(candidate, std::ios::binary);
        if (!in)
            continue;
        // A certificate line is its blob in base64 plus a type name and a
        // comment: anything much longer is not one.
        constexpr std::size_t max_line = 4 * max_certificate_blob;
        std::string line;
        while (std::getline(in, line)) {
            if (line.size() > max_line)
                return errc::too_large;
            if (!is_blank_or_comment(line))
                return parse_certificate_line(line);
        }
        return errc::invalid_format;
    }
    return errc::io_error;
}

bool certificate_allowed(const certificate& cert, std::string_view accepted)
{
    if (name_list_contains(accepted, cert.type_name()))
        return true;
    if (cert.key().type() == key_type::rsa)
        for (auto alg : rsa_sha2_cert_algorithms)
            if (name_list_contains(accepted, alg))
                return true;
    return false;
}

std::optional<std::string> choose_certificate_algorithm(const certificate& cert, std::string_view accepted,
                                                        const std::optional<std::string>& server_sig_algs)
{
    // As for plain keys: only RSA signs with an algorithm other than its
    // type's, and only server-sig-algs lets us pick one. The server lists
    // plain signature algorithms; the certificate form is what we offer.
    if (cert.key().type() != key_type::rsa || !server_sig_algs) {
        if (name_list_contains(accepted, cert.type_name()))
            return std::string(cert.type_name());
        return std::nullopt;
    }
    for (auto alg : split_name_list(accepted)) {
        auto plain = certificate_signature_algorithm(alg);
        if (!plain)
            continue;
        auto t = key_type_for_signature_algorithm(*plain);
        if (!t || *t != key_type::rsa)
            continue;
        if (name_list_contains(*server_sig_algs, *plain))
            return std::string(alg);
    }
    return std::nullopt;
}

client_identity identity_from_certificate(certificate cert, std::string name, bool user_provided,
                                          std::function<result<private_key>(std::optional<std::string_view>)> load)
{
    client_identity id;
    id.name = std::move(name);
    id.user_provided = user_provided;
    id.key = cert.key();
    id.cert = std::make_shared<const certificate>(std::move(cert));
    id.load = std::move(load);
    return id;
}

std::optional<client_identity> identity_from_agent_certificate(const agent::identity& a)
{
    auto cert = certificate::from_blob(a.key_blob);
    if (!cert || cert->kind() != cert_kind::user)
        return std::nullopt;
    client_identity id;
    id.name = a.comment;
    id.agent = true;
    id.key = cert->key();
    id.cert = std::make_shared<const certificate>(std::move(*cert));
    return id;
}

bool certificate_name_matches(std::string_view cert_name, std::string_view key_name) noexcept
{
    if (cert_name == key_name)
        return true;
    for (std::string_view suffix : {std::string_view(".pub"), std::string_view("-cert.pub")}) {
        if (cert_name.size() > suffix.size() && cert_name.size() - suffix.size() == key_name.size() &&
            cert_name.substr(key_name.size()) == suffix && cert_name.substr(0, key_name.size()) == key_name)
            return true;
    }
    return false;
}

} // namespace longhaul
