// User certificates on the client side of publickey (PROTOCOL.certkeys), as
// OpenSSH's ssh offers them: reading "<type>-cert-v01@openssh.com AAAA..."
// files, which PubkeyAcceptedAlgorithms entry a certificate is offered
// with (RSA's chosen from server-sig-algs as for plain RSA keys), and the
// identity that offers one. The signature is always the certified key's
// own (rsa-sha2-512 for rsa-sha2-512-cert-v01@openssh.com), made by a
// private key the identity loads or another identity holds.
#pragma once

#include "common/auth/client_auth.hpp"
#include "common/keys/certificate.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

// The certificate OpenSSH's sshkey_load_public finds for `path`: in the
// file itself, else in `path`.pub (ssh asks for "<identity>-cert" and gets
// "<identity>-cert.pub"); the first line that is not blank or a comment.
// errc::io_error when neither file can be opened, too_large for a file no
// certificate could fill, otherwise parse_certificate_line's error (key_lines.hpp).
result<certificate> load_certificate_file(const std::filesystem::path& path);

// Whether PubkeyAcceptedAlgorithms lets the certificate be offered (OpenSSH's
// key_type_allowed_by_config: its type name, or for RSA the SHA-2
// certificate algorithms).
bool certificate_allowed(const certificate& cert, std::string_view accepted);

// The algorithm to offer the certificate with (key_sig_algorithm): for an
// RSA certificate when the server sent server-sig-algs, the first RSA
// certificate algorithm of `accepted` whose plain signature algorithm the
// server lists; otherwise the certificate's type name if `accepted` holds
// it. nullopt when there is none.
std::optional<std::string> choose_certificate_algorithm(const certificate& cert, std::string_view accepted,
                                                        const std::optional<std::string>& server_sig_algs);

// An identity offering `cert`, named `name` as -v prints it (the identity
// file for "<identity>-cert.pub", the certificate file for CertificateFile).
// `load` reads the private key (the identity file's loader) or is empty,
// when the machine must find the private key in another identity.
client_identity identity_from_certificate(certificate cert, std::string name, bool user_provided,
                                          std::function<result<private_key>(std::optional<std::string_view>)> load);

namespace agent {
struct identity;
}
// A user certificate held by the agent (ssh-add loads "<key>-cert.pub" with
// the key), named by its comment and signed through the agent; nullopt for
// anything else the agent lists that is not a plain key this build knows.
std::optional<client_identity> identity_from_agent_certificate(const agent::identity& id);

// OpenSSH's id_filename_matches: a certificate identity's name is the
// private key's, or the private key's plus ".pub" or "-cert.pub".
bool certificate_name_matches(std::string_view cert_name, std::string_view key_name) noexcept;

} // namespace longhaul
