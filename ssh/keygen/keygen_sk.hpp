// ssh-keygen -t ed25519-sk / ecdsa-sk: a new credential on a FIDO
// authenticator, made through the SecurityKeyProvider middleware (-w, else
// $SSH_SK_PROVIDER) as OpenSSH 9.2's ssh-keygen makes it: the -O options
// of an enrolment, the "touch your authenticator" notices, up to three PIN
// attempts, a resident credential's overwrite question, and the
// attestation file of -O write-attestation.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/openssh_key_v1.hpp"
#include "ssh/keygen/keygen_commands.hpp"
#include "ssh/sk/sk_provider.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::keygen {

// What the -O options ask of an enrolment.
struct sk_generation {
    sk_enroll_request request;
    std::optional<std::string> attestation_path; // -O write-attestation=
};

// Reads the -O options of an enrolment for a key of type `t`:
// no-touch-required, verify-required, resident, device=, user=,
// challenge= (a file; 32 random bytes without it), write-attestation=,
// application= (must begin with "ssh:"). Names are matched without regard
// to case, as OpenSSH does. Anything else, and an unreadable challenge
// file, ends the program with OpenSSH's message.
sk_generation parse_sk_generation_options(key_type t, const std::vector<std::string>& options);

struct sk_enrolled {
    openssh_security_key record; // no comment yet
    bytes attestation;           // "ssh-sk-attest-v01" blob
};

// Enrols through the provider, printing OpenSSH's notices (unless -q) and
// asking for the PIN when the authenticator wants one. Ends the program
// with "Key enrollment failed: ..." (and the provider's own lines) when it
// fails.
sk_enrolled enroll_security_key(const sk_generation& g, const keygen_options& o);

// The attestation blob OpenSSH writes: string "ssh-sk-attest-v01", string
// attestation certificate, string enrolment signature, string
// authenticator data, uint32 0, string "" (both reserved).
bytes attestation_blob(const sk_enroll_result& r);

// Writes it to `path` (mode 0600) and says so unless quiet.
void save_attestation(const bytes& blob, const std::string& path, bool quiet);

// ssh-keygen -K: the authenticator's resident credentials saved in the
// current directory as id_ed25519_sk_rk[_APP[_USER]] (and id_ecdsa_sk_rk...)
// with their public keys, as OpenSSH's do_download_sk: the PIN asked
// first, -O device= the only option, each existing file confirmed, one
// passphrase for all. 0, or 255 on a failure.
int keygen_download_resident(const keygen_options& o);

// The file name suffix OpenSSH gives a resident credential: the
// application without "ssh:" (or "ssh://"), then "_" and the user id when
// it is not all zero bytes (in hex when it holds a path character, a
// backslash or a control character).
std::string resident_suffix(const std::string& application, byte_span user_id);

// OpenSSH's read_passphrase with RP_ALLOW_STDIN, for a PIN: the askpass
// program when SSH_ASKPASS_REQUIRE=force, or when standard input is not a
// terminal and a display could show it; otherwise the terminal, else
// standard input.
std::string read_sk_pin(const char* prompt);

// -Y sign with a security key's file, as OpenSSH's sign_one: for each
// message, "Enter PIN for TYPE key: " first when the key wants user
// verification, "Confirm user presence for key TYPE FP" when it wants a
// touch, then the provider (-w, else $SSH_SK_PROVIDER) signs. A failure is
// printed as "Couldn't sign message: ..." and its words left in `failure`
// for the caller's "Signing FILE failed: ...".
std::function<result<bytes>(std::string_view, byte_span)> security_key_signer(openssh_security_key key,
                                                                             const keygen_options& o,
                                                                             std::shared_ptr<std::string> failure);

// -s with a security key's file as the CA, as OpenSSH's do_ca_sign:
// "Enter PIN for CA key: " once, here, when the key wants user
// verification; then for each certificate the "Confirm user presence for
// key TYPE FP" notice (notify_start: stderr when it is a terminal, else the
// askpass program where a display could show it) while the provider (-w,
// else $SSH_SK_PROVIDER) signs, and "User presence confirmed" after it
// where the notice was on stderr. A failure's words (OpenSSH's, for
// "Couldn't certify key PATH: ...") are left in `failure`.
std::function<result<bytes>(std::string_view, byte_span)> security_key_ca_signer(openssh_security_key key,
                                                                                const keygen_options& o,
                                                                                std::shared_ptr<std::string> failure);

} // namespace longhaul::keygen
