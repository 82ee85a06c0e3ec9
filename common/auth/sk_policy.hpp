// Security-key (FIDO) signatures: what sshd requires of the flags an
// authenticator signed, as OpenSSH 9.2's sshd does after the signature
// itself verified. The user's touch (user presence) unless the key's
// options waive it (authorized_keys no-touch-required, or a certificate's
// no-touch-required extension; sshd_config PubkeyAuthOptions
// touch-required overrides the waiver), and PIN or biometric verification
// when the key's options (verify-required) or PubkeyAuthOptions
// verify-required ask for it. Pure functions: the monitor and the
// unprivileged machine apply them alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

struct sk_requirements {
    // Fail-safe defaults: a caller that did not compute them still demands
    // the touch.
    bool presence = true;
    bool verification = false;
};

// From PubkeyAuthOptions and the options of the line (or certificate) that
// allowed the key, already merged as OpenSSH merges a cert-authority line
// with its certificate (no-touch-required on both, verify-required on either).
sk_requirements sk_requirements_for(bool config_touch_required, bool config_verify_required,
                                    bool options_no_touch_required, bool options_verify_required) noexcept;

// The requirement the signed flags do not meet, presence first, as the
// phrase OpenSSH logs ("user presence (authenticator touch)", "user
// verification"); nothing when they are met.
std::optional<std::string_view> sk_unmet_requirement(const sk_requirements& r, std::uint8_t flags) noexcept;

// sshd's error line for such a signature: "public key ED25519-SK
// SHA256:... signature for [invalid user ]USER from IP port N rejected:
// <unmet> requirement not met " (OpenSSH ends it with a space).
// `key_text` is the key's short type and fingerprint.
std::string sk_refusal_line(std::string_view key_text, bool valid_user, std::string_view user,
                            std::string_view remote_ip, int remote_port, std::string_view unmet);

} // namespace longhaul
