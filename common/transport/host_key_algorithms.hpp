// Host key algorithms with certificates (PROTOCOL.certkeys): which names
// the transport negotiates, what a certificate algorithm signs with, and
// the order a server offers its keys and certificates in. Kept apart from
// algorithms.hpp so that the plain lists (which sshd's
// PubkeyAcceptedAlgorithms and server-sig-algs are built from) stay as
// they are: certificates only ever ride in the host key list.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// The certificate host key algorithms this build implements, in OpenSSH's
// default order (ssh-ed25519-cert-v01@openssh.com first; no ssh-rsa-cert,
// as OpenSSH 8.8+ leaves it out of its defaults).
std::string default_certificate_host_key_algorithms();

// True for a certificate algorithm whose plain signature algorithm this
// build can verify (ssh-rsa-cert-v01@openssh.com included).
bool supported_certificate_host_key_algorithm(std::string_view name) noexcept;

// The plain signature algorithm a host key algorithm signs the exchange
// hash with: the name itself, or "rsa-sha2-512" for
// "rsa-sha2-512-cert-v01@openssh.com" and so on.
std::string_view host_key_signature_algorithm(std::string_view alg) noexcept;

// The key type behind a plain or certificate host key algorithm.
result<key_type> host_key_type_for_algorithm(std::string_view alg) noexcept;

// A server's host key list as OpenSSH's sshd builds it (list_hostkey_types)
// when it has certificates: for each key in order, its plain algorithms
// (RSA: rsa-sha2-512, rsa-sha2-256, ssh-rsa), then, when a certificate
// certifies it, its certificate algorithms; every name kept only when
// `allowed` (HostKeyAlgorithms) lists it, each once.
std::string server_host_key_algorithm_order(const std::vector<const public_key*>& keys,
                                            const std::vector<certificate>& certificates, std::string_view allowed);

// The certificate in `certificates` that certifies `key` (the last one, as
// sshd keeps the last HostCertificate for a key), or nullptr.
const certificate* certificate_for_key(const std::vector<certificate>& certificates, const public_key& key) noexcept;

} // namespace longhaul
