#include "common/auth/sk_policy.hpp"

#include "common/auth/auth_common.hpp"
#include "common/keys/public_key.hpp"

namespace longhaul {

sk_requirements sk_requirements_for(bool config_touch_required, bool config_verify_required,
                                    bool options_no_touch_required, bool options_verify_required) noexcept
{
    return {config_touch_required || !options_no_touch_required, config_verify_required || options_verify_required};
}

std::optional<std::string_view> sk_unmet_requirement(const sk_requirements& r, std::uint8_t flags) noexcept
{
    if (r.presence && (flags & sk_flag_user_presence) == 0)
        return "user presence (authenticator touch)";
    if (r.verification && (flags & sk_flag_user_verification) == 0)
        return "user verification";
    return std::nullopt;
}

std::string sk_refusal_line(std::string_view key_text, bool valid_user, std::string_view user,
                            std::string_view remote_ip, int remote_port, std::string_view unmet)
{
    return "public key " + std::string(key_text) + " signature for " + (valid_user ? "" : "invalid user ") +
           std::string(truncated(user, 100)) + " from " + std::string(truncated(remote_ip, 128)) + " port " +
           std::to_string(remote_port) + " rejected: " + std::string(unmet) + " requirement not met ";
}

} // namespace longhaul
