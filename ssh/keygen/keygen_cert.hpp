// ssh-keygen's certificate operations, as OpenSSH 9.2's: signing public keys
// with a CA key (-s) and listing certificates (-L), plus what -l prints for
// a certificate line. The certificate format itself is
// common/keys/certificate.hpp; the command line pieces keygen_cert_spec.hpp.
#pragma once

#include "common/keys/certificate.hpp"
#include "ssh/keygen/keygen_cert_spec.hpp"
#include "ssh/keygen/keygen_commands.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// What -s needs beyond keygen_options. -t (o.key_type) names the CA's
// signature algorithm; -q silences the "Signed ..." lines.
struct cert_sign_request {
    std::string ca_path;                    // -s
    bool ca_in_agent = false;               // -U: ca_path is the CA's public key, ssh-agent signs
    std::optional<std::string> pkcs11;      // -D: ca_path is the CA's public key, this module's token signs
    std::optional<std::string> key_id;      // -I
    bool host = false;                      // -h
    std::optional<std::string> principals;  // -n, as given
    keygen::cert_validity validity;         // -V
    keygen::cert_serial serial;             // -z
    std::vector<std::string> options;       // -O, in order
    std::vector<std::string> files;         // the public keys to sign
};

// -s: writes <file minus ".pub">-cert.pub for each file.
int keygen_sign(const keygen_options& o, const cert_sign_request& r);
// -L: lists each certificate of o.file ("-": standard input); exit 1 when
// none was found.
int keygen_show_certificates(const keygen_options& o);

namespace keygen {

// A "cert-type base64 [comment]" line (up to its first newline), read by
// parse_certificate_line, its CA signature checked as OpenSSH's sshkey_read
// checks it (any signature algorithm); `comment` receives the rest.
// errc::unsupported when the text is not a certificate type name,
// signature_invalid for a bad CA signature, another error otherwise.
result<certificate> read_certificate(std::string_view line, std::string* comment = nullptr);

// sshkey_load_public for a certificate: the first key line of `path`, or
// of `path`.pub, when it is a certificate whose CA signature holds;
// `comment` receives its comment. nullopt otherwise (a plain key, no file).
std::optional<certificate> load_certificate_file(const std::string& path, std::string& comment);

// print_cert's lines (without the "path:" line above them).
std::string describe_certificate(const certificate& cert, fingerprint_hash hash);

// The -l line (and with -v the picture) for a certificate.
void print_certificate_fingerprint(const certificate& cert, const std::string& comment, const keygen_options& o);

// The CA of -s and what signs with it: a private key file, ssh-agent (-U)
// or a PKCS#11 token (-D, keygen_pkcs11.hpp's pkcs11_ca).
struct ca_signer {
    public_key key;
    certificate::signer sign; // holds what signs (the key, agent, module or authenticator)
    // A security key's words for a failed signature (empty: errc's).
    std::shared_ptr<std::string> failure = std::make_shared<std::string>();
};

// The name of the certificate written for `pub_path` (".pub" replaced by
// "-cert.pub", or "-cert.pub" appended).
std::string certificate_path(const std::string& pub_path);

} // namespace keygen

} // namespace longhaul
