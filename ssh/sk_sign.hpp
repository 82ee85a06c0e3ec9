// Signing for login with a security key held in a key file, as OpenSSH
// 9.2's ssh does it (sshconnect2.c identity_sign): the "Confirm user
// presence" notice for keys that want a touch, the middleware's sk_sign,
// and on SSH_SK_ERR_PIN_REQUIRED one retry with the PIN the user types at
// "Enter PIN for ED25519-SK key FILE: ".
#pragma once

#include "common/bytes.hpp"
#include "common/keys/openssh_key_v1.hpp"
#include "ssh/client_config.hpp"
#include "ssh/prompt/user_notifier.hpp"
#include "ssh/sk/sk_provider.hpp"

#include <functional>
#include <optional>
#include <string>
#include <variant>

namespace longhaul {

class logger;

// The library to load for SecurityKeyProvider `configured` (after
// defaults: "internal" unless set). "$VAR" names an environment variable
// (unset: none, as OpenSSH says "did not resolve; disabling"). OpenSSH
// builds without the built-in middleware default to $SSH_SK_PROVIDER;
// Longhaul has no built-in one, so SSH_SK_PROVIDER, when set, replaces
// "internal". The result is "internal" when that is what remains, nullopt
// when there is no provider at all.
std::optional<std::string> resolve_sk_provider(const std::optional<std::string>& configured, logger& log);

// The message for SecurityKeyProvider internal.
inline constexpr std::string_view sk_internal_unsupported =
    "SecurityKeyProvider internal: not supported yet (set SecurityKeyProvider to a middleware library)";

// One signature with a security key, as OpenSSH's ssh and ssh-agent make
// it: the "Confirm user presence for key TYPE FP[notice_suffix]" notice
// while the authenticator works (keys that want a touch; askpass only when
// `notice_askpass_only`), sk_sign, and on SSH_SK_ERR_PIN_REQUIRED one retry
// with what `read_pin(prompt_kind)` returns (nullopt or empty: no PIN).
// The result is the signature blob or OpenSSH's words for the failure.
struct sk_sign_options {
    bool notice_askpass_only = false;
    key_fingerprint_hash fingerprint_hash = key_fingerprint_hash::sha256;
    std::string notice_suffix;
    std::string log_context = "identity_sign"; // the debug lines' "FUNCTION: sshkey_sign: ..."
    std::function<std::optional<std::string>()> read_pin;
};
std::variant<bytes, std::string> sign_with_security_key(const sk_provider& provider, const openssh_security_key& key,
                                                        byte_span data, const sk_sign_options& options, logger& log);

// Signs for one login; loads the provider once and keeps it.
class sk_login_signer {
public:
    // `fingerprint_hash` is FingerprintHash, for the touch notice.
    sk_login_signer(std::optional<std::string> provider, bool batch_mode, key_fingerprint_hash fingerprint_hash,
                    logger& log)
        : provider_path_(std::move(provider)), batch_mode_(batch_mode), fingerprint_hash_(fingerprint_hash), log_(log)
    {
    }

    // The signature blob for `key` (from its file `key_file`, for the PIN
    // prompt) over `data`, or the reason it failed in OpenSSH's words (for
    // "sign_and_send_pubkey: signing failed for ...").
    std::variant<bytes, std::string> sign(const openssh_security_key& key, const std::string& key_file,
                                          byte_span data);

private:
    const sk_provider* provider();

    std::optional<std::string> provider_path_;
    bool batch_mode_;
    key_fingerprint_hash fingerprint_hash_;
    logger& log_;
    bool tried_load_ = false;
    std::optional<sk_provider> provider_;
};

} // namespace longhaul
