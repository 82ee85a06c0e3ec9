#include "ssh/sk/sk_tool.hpp"

#include <cstdio>
#include <utility>

namespace longhaul {

const char* sk_error_text(int code)
{
    switch (code) {
    case sk_api::err_unsupported: return "requested feature not supported";
    case sk_api::err_pin_required: return "incorrect passphrase supplied to decrypt private key";
    case sk_api::err_device_not_found: return "device not found";
    case sk_api::err_credential_exists: return "bad permissions";
    default: return "invalid format";
    }
}

std::optional<sk_provider> load_sk_provider(const std::string& path, const char* option, std::string& why)
{
    if (path == "internal") {
        why = std::string("the built-in FIDO middleware (\"internal\") is not supported yet; name a "
                          "SecurityKeyProvider library with ") +
              option + " or SSH_SK_PROVIDER";
        return std::nullopt;
    }
    auto loaded = sk_provider::load(path);
    if (auto* f = std::get_if<sk_failure>(&loaded)) {
        if (!f->cause.empty())
            std::fprintf(stderr, "%s\r\n", f->cause.c_str());
        std::fprintf(stderr, "%s\r\n", f->message.c_str());
        why = "invalid format";
        return std::nullopt;
    }
    return std::move(std::get<sk_provider>(loaded));
}

const char* report_sk_failure(const std::string& path, const sk_failure& f)
{
    if (f.from_library)
        std::fprintf(stderr, "Provider \"%s\" returned failure %d\r\n", path.c_str(), f.code);
    else
        std::fprintf(stderr, "%s\r\n", f.message.c_str());
    return sk_error_text(f.code);
}

std::optional<std::vector<sk_resident_record>> resident_records(std::vector<sk_resident_result> listed)
{
    std::vector<sk_resident_record> out;
    for (auto& rk : listed) {
        if (rk.application.rfind("ssh:", 0) != 0)
            continue;
        if (rk.alg != sk_api::alg_ecdsa && rk.alg != sk_api::alg_ed25519)
            continue;
        const key_type t = rk.alg == sk_api::alg_ed25519 ? key_type::sk_ed25519 : key_type::sk_ecdsa_p256;
        auto key = sk_enrolled_public_key(t, rk.key, rk.application);
        if (!key)
            return std::nullopt;
        sk_resident_record r;
        r.record.key = std::move(*key);
        r.record.flags = sk_api::flag_user_presence_required | sk_api::flag_resident_key |
                         (rk.flags & sk_api::flag_user_verification_required);
        r.record.key_handle = std::move(rk.key.key_handle);
        r.record.comment = std::move(rk.application);
        r.user_id = std::move(rk.user_id);
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace longhaul
