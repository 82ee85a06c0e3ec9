#include "ssh/sk_provider.hpp"

#include "common/wire.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace longhaul {

namespace {

// The magnitude without leading zero bytes: what an mpint carries.
byte_span strip_zeros(byte_span b)
{
    while (!b.empty() && b[0] == 0)
        b = b.subspan(1);
    return b;
}

// P-256's r and s are below the group order: 32 bytes at most once leading
// zeros are gone, and never zero.
constexpr std::size_t p256_scalar_bytes = 32;
constexpr std::size_t ed25519_signature_bytes = 64;

std::string hex32(std::uint32_t v)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08lx", static_cast<unsigned long>(v));
    return buf;
}

// Frees a response the way the ABI says its owner must: every buffer with
// free(), then the struct itself (the library allocated them with malloc).
struct response_free {
    void operator()(sk_api::sk_sign_response* r) const noexcept
    {
        if (r == nullptr)
            return;
        std::free(r->sig_r);
        std::free(r->sig_s);
        std::free(r);
    }
};

std::string dl_error()
{
    const char* e = dlerror();
    return e != nullptr ? e : "unknown error";
}

} // namespace

std::optional<bytes> encode_sk_signature(key_type t, const sk_sign_result& r)
{
    bytes out;
    wire_writer w(out);
    switch (t) {
    case key_type::sk_ed25519:
        if (r.sig_r.size() != ed25519_signature_bytes)
            return std::nullopt;
        w.string(key_type_name(t)).string(byte_span(r.sig_r));
        break;
    case key_type::sk_ecdsa_p256: {
        const byte_span sr = strip_zeros(r.sig_r), ss = strip_zeros(r.sig_s);
        if (sr.empty() || ss.empty() || sr.size() > p256_scalar_bytes || ss.size() > p256_scalar_bytes)
            return std::nullopt;
        w.string(key_type_name(t));
        const auto mark = w.begin_string();
        w.mpint(sr).mpint(ss);
        w.end_string(mark);
        break;
    }
    default: return std::nullopt;
    }
    w.u8(r.flags).u32(r.counter);
    return out;
}

void sk_provider::closer::operator()(void* handle) const noexcept
{
    if (handle != nullptr)
        dlclose(handle);
}

std::variant<sk_provider, sk_failure> sk_provider::load(const std::string& path)
{
    const auto fail = [&](std::string m) { return sk_failure{sk_api::err_general, std::move(m)}; };
    sk_provider p;
    p.path_ = path;
    dlerror();
    p.handle_.reset(dlopen(path.c_str(), RTLD_NOW));
    if (!p.handle_)
        return fail("Provider \"" + path + "\" dlopen failed: " + dl_error());
    // OpenSSH insists on all four entry points even where it uses one, so a
    // library it refuses is refused here too.
    const auto sym = [&](const char* name) -> void* {
        dlerror();
        void* s = dlsym(p.handle_.get(), name);
        return dlerror() == nullptr ? s : nullptr;
    };
    auto version = reinterpret_cast<sk_api::api_version_fn>(sym("sk_api_version"));
    if (version == nullptr)
        return fail("Provider \"" + path + "\" dlsym(sk_api_version) failed: " + dl_error());
    p.version_ = version();
    if ((p.version_ & sk_api::version_major_mask) != sk_api::version_major)
        return fail("Provider \"" + path + "\" implements unsupported version " + hex32(p.version_) +
                    " (supported: " + hex32(sk_api::version_major) + ")");
    for (const char* name : {"sk_enroll", "sk_sign", "sk_load_resident_keys"}) {
        if (sym(name) == nullptr)
            return fail("Provider \"" + path + "\" dlsym(" + name + ") failed: " + dl_error());
    }
    p.sign_ = reinterpret_cast<sk_api::sign_fn>(sym("sk_sign"));
    return p;
}

std::variant<sk_sign_result, sk_failure> sk_provider::sign(key_type t, byte_span data, const std::string& application,
                                                           byte_span key_handle, std::uint8_t key_flags,
                                                           const char* pin) const
{
    std::uint32_t alg = 0;
    if (t == key_type::sk_ed25519)
        alg = sk_api::alg_ed25519;
    else if (t == key_type::sk_ecdsa_p256)
        alg = sk_api::alg_ecdsa;
    else
        return sk_failure{sk_api::err_unsupported, "not a security key"};
    sk_api::sk_sign_response* raw = nullptr;
    const int rc = sign_(alg, data.data(), data.size(), application.c_str(), key_handle.data(), key_handle.size(),
                         key_flags, pin, nullptr, &raw);
    std::unique_ptr<sk_api::sk_sign_response, response_free> resp(raw);
    if (rc != 0)
        return sk_failure{rc < 0 ? rc : sk_api::err_general, "sk_sign failed with code " + std::to_string(rc)};
    if (!resp)
        return sk_failure{sk_api::err_general, "sk_sign returned no response"};
    // Lengths come from the library: bounded before anything is copied.
    if (resp->sig_r == nullptr || resp->sig_r_len == 0 || resp->sig_r_len > max_sk_signature_part)
        return sk_failure{sk_api::err_general, "sk_sign returned a bad sig_r"};
    if (alg == sk_api::alg_ecdsa &&
        (resp->sig_s == nullptr || resp->sig_s_len == 0 || resp->sig_s_len > max_sk_signature_part))
        return sk_failure{sk_api::err_general, "sk_sign returned a bad sig_s"};
    sk_sign_result out;
    out.flags = resp->flags;
    out.counter = resp->counter;
    out.sig_r.assign(resp->sig_r, resp->sig_r + resp->sig_r_len);
    if (alg == sk_api::alg_ecdsa)
        out.sig_s.assign(resp->sig_s, resp->sig_s + resp->sig_s_len);
    return out;
}

} // namespace longhaul
