// The certificate half of ssh's host key verification (OpenSSH's
// sshconnect.c: verify_host_key's "Server host certificate" line,
// check_host_cert, and sshkey_check_revoked for a certificate): what the
// checker in host_key_check.cpp needs when the server presented a host
// certificate. Whether a CA is trusted for the host is the known_hosts
// @cert-authority lookup (known_host_keys::check_certificate).
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/revocation_file.hpp"
#include "common/log.hpp"
#include "ssh/client_config.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

// sshkey_type() of a certificate: "ED25519-CERT", "ECDSA-CERT", "RSA-CERT".
std::string certificate_type_label(const certificate& cert);

// The -v line: "Server host certificate: ssh-ed25519-cert-v01@openssh.com
// SHA256:..., serial 1000 ID "host cert" CA ssh-ed25519 SHA256:... valid
// from 2020-01-01T00:00:00 to 2040-01-01T00:00:00" (fingerprints of the
// certified key and of the CA, in `hash`).
std::string server_host_certificate_line(const certificate& cert, key_fingerprint_hash hash);

// OpenSSH's sshkey_format_cert_validity: "forever", "before T", "after T",
// "from T to T" (local time).
std::string certificate_validity_text(const certificate& cert);

// Why check_host_cert refuses a certificate, and at which level OpenSSH
// logs it.
struct host_certificate_problem {
    log_level level = log_level::error;
    std::string message;
};

// OpenSSH's check_host_cert(): a host certificate, valid at `now`, with
// `host` (HostKeyAlias or the host name as given) one of its principals
// (exactly, as OpenSSH 9.2 compares them; no principals: any host), no
// critical options, and a CA signature algorithm
// that `ca_signature_algorithms` (CASignatureAlgorithms, a pattern list)
// allows. nullopt when it is acceptable.
std::optional<host_certificate_problem> check_host_certificate(const certificate& cert, std::string_view host,
                                                               std::string_view ca_signature_algorithms,
                                                               std::uint64_t now);

// sshkey_check_revoked() for a certificate: the certified key or the CA
// key listed (a key list or a KRL), or, in a KRL, the certificate itself
// revoked by its CA's section (serial or key ID). A file that cannot be
// read or parsed is an error, as for a plain key.
revocation_check check_certificate_revocation(const std::string& path, const certificate& cert);

} // namespace longhaul
