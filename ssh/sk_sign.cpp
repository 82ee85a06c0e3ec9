#include "ssh/sk_sign.hpp"

#include "common/log.hpp"
#include "ssh/known_hosts.hpp"
#include "ssh/prompt/prompt.hpp"
#include "ssh/sk/sk_tool.hpp"

#include <cstdlib>

namespace longhaul {

std::optional<std::string> resolve_sk_provider(const std::optional<std::string>& configured, logger& log)
{
    std::string value = configured.value_or("internal");
    if (value == "internal") {
        const char* env = std::getenv("SSH_SK_PROVIDER");
        if (env != nullptr && *env != '\0') {
            log.debug2("resolved SecurityKeyProvider $SSH_SK_PROVIDER => " + std::string(env));
            return std::string(env);
        }
        return value;
    }
    if (value.size() > 1 && value[0] == '$') {
        const char* env = std::getenv(value.c_str() + 1);
        if (env == nullptr) {
            log.debug("Authenticator provider " + value + " did not resolve; disabling");
            return std::nullopt;
        }
        log.debug2("resolved SecurityKeyProvider " + value + " => " + env);
        return std::string(env);
    }
    return value;
}

const sk_provider* sk_login_signer::provider()
{
    if (!tried_load_) {
        tried_load_ = true;
        if (!provider_path_) {
            log_.error("No SecurityKeyProvider for security keys");
        } else if (*provider_path_ == "internal") {
            log_.error(std::string(sk_internal_unsupported));
        } else {
            log_.debug("loading SecurityKeyProvider " + *provider_path_ + " (in-process)");
            auto loaded = sk_provider::load(*provider_path_);
            if (auto* f = std::get_if<sk_failure>(&loaded)) {
                if (!f->cause.empty())
                    log_.error(f->cause);
                log_.error(f->message);
            } else {
                provider_.emplace(std::move(std::get<sk_provider>(loaded)));
            }
        }
    }
    return provider_ ? &*provider_ : nullptr;
}

std::variant<bytes, std::string> sign_with_security_key(const sk_provider& p, const openssh_security_key& key,
                                                        byte_span data, const sk_sign_options& o, logger& log)
{
    const std::string short_type(key_type_short_name(key.key.type()));
    std::optional<user_notifier> notice;
    if ((key.flags & sk_flag_user_presence) != 0)
        notice.emplace(o.notice_askpass_only,
                       "Confirm user presence for key " + short_type + " " +
                           key_fingerprint_text(key.key, o.fingerprint_hash) + o.notice_suffix,
                       log);
    auto r = p.sign(key.key.type(), data, key.key.application(), key.key_handle, key.flags, nullptr);
    if (auto* f = std::get_if<sk_failure>(&r); f && f->code == sk_api::err_pin_required && o.read_pin) {
        log.debug(o.log_context + ": sshkey_sign: " + sk_error_text(f->code));
        // As OpenSSH: the touch notice goes while the PIN is asked, and
        // does not come back for the retry.
        if (notice)
            notice->complete(nullptr);
        std::optional<std::string> pin = o.read_pin();
        r = p.sign(key.key.type(), data, key.key.application(), key.key_handle, key.flags,
                   pin && !pin->empty() ? pin->c_str() : nullptr);
        if (pin)
            cleanse(pin->data(), pin->size());
    }
    if (auto* f = std::get_if<sk_failure>(&r)) {
        log.debug(o.log_context + ": sshkey_sign: " + f->message);
        if (notice)
            notice->complete(nullptr);
        return sk_error_text(f->code);
    }
    auto blob = encode_sk_signature(key.key.type(), std::get<sk_sign_result>(r));
    if (notice)
        notice->complete(blob ? "User presence confirmed" : nullptr);
    if (!blob)
        return std::string("invalid format");
    return std::move(*blob);
}

std::variant<bytes, std::string> sk_login_signer::sign(const openssh_security_key& key, const std::string& key_file,
                                                       byte_span data)
{
    const sk_provider* p = provider();
    if (p == nullptr) {
        if (provider_path_ && *provider_path_ == "internal")
            return std::string("feature not supported");
        return std::string("invalid format");
    }
    sk_sign_options o;
    o.notice_askpass_only = batch_mode_;
    o.fingerprint_hash = fingerprint_hash_;
    o.read_pin = [&]() -> std::optional<std::string> {
        const std::string short_type(key_type_short_name(key.key.type()));
        auto pin = read_passphrase("Enter PIN for " + short_type + " key " + key_file + ": ", prompt_echo::off);
        if (!pin)
            return std::string();
        return std::string(as_string_view(pin->span()));
    };
    return sign_with_security_key(*p, key, data, o, log_);
}

} // namespace longhaul
