#include "ssh/sk/sk_provider.hpp"

#include "common/wire.hpp"


#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

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

// An enrolment answer's buffers (also inside each resident credential).
void free_enroll_buffers(sk_api::sk_enroll_response& r) noexcept
{
    std::free(r.public_key);
    std::free(r.key_handle);
    std::free(r.signature);
    std::free(r.attestation_cert);
    std::free(r.authdata);
}

struct enroll_response_free {
    void operator()(sk_api::sk_enroll_response* r) const noexcept
    {
        if (r == nullptr)
            return;
        free_enroll_buffers(*r);
        std::free(r);
    }
};

// The ABI's algorithm number for a security key type.
std::optional<std::uint32_t> sk_alg_of(key_type t)
{
    if (t == key_type::sk_ed25519)
        return sk_api::alg_ed25519;
    if (t == key_type::sk_ecdsa_p256)
        return sk_api::alg_ecdsa;
    return std::nullopt;
}

// A code the middleware returned (positive ones are not in the ABI).
sk_failure library_failure(int rc, const char* call)
{
    sk_failure f{rc < 0 ? rc : sk_api::err_general, std::string(call) + " failed with code " + std::to_string(rc)};
    f.from_library = true;
    return f;
}

// A buffer of the library's, copied when within `max` (a null pointer is
// an empty buffer only with length 0).
bool copy_part(const std::uint8_t* p, std::size_t len, std::size_t max, bytes& out)
{
    if (len > max || (p == nullptr && len != 0))
        return false;
    out.assign(p, p + len);
    return true;
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

std::optional<public_key> sk_enrolled_public_key(key_type t, const sk_enroll_result& r,
                                                 const std::string& application)
{
    if (t != key_type::sk_ed25519 && t != key_type::sk_ecdsa_p256)
        return std::nullopt;
    bytes blob;
    wire_writer w(blob);
    w.string(key_type_name(t));
    if (t == key_type::sk_ecdsa_p256)
        w.string("nistp256");
    w.string(byte_span(r.public_key)).string(application);
    auto key = public_key::from_blob(blob);
    if (!key || key->type() != t)
        return std::nullopt;
    return std::move(*key);
}

std::variant<sk_provider, sk_failure> sk_provider::load(const std::string& path)
{
    const auto fail = [&](std::string m) { return sk_failure{sk_api::err_general, std::move(m)}; };
    sk_provider p;
    p.path_ = path;
    if (auto why = check_library_file(path, "sk_api_version"); !why.empty())
        return sk_failure{sk_api::err_general, "provider " + path + " is not an OpenSSH FIDO library", std::move(why)};
    p.library_ = shared_library::open(path);
    if (p.library_.empty())
        return fail("Provider \"" + path + "\" dlopen failed: " + p.library_.error());
    // OpenSSH insists on all four entry points even where it uses one, so a
    // library it refuses is refused here too.
    const auto sym = [&](const char* name) { return p.library_.symbol(name); };
    auto version = reinterpret_cast<sk_api::api_version_fn>(sym("sk_api_version"));
    if (version == nullptr)
        return fail("Provider \"" + path + "\" dlsym(sk_api_version) failed: " + p.library_.error());
    p.version_ = version();
    if ((p.version_ & sk_api::version_major_mask) != sk_api::version_major)
        return fail("Provider \"" + path + "\" implements unsupported version " + hex32(p.version_) +
                    " (supported: " + hex32(sk_api::version_major) + ")");
    for (const char* name : {"sk_enroll", "sk_sign", "sk_load_resident_keys"}) {
        if (sym(name) == nullptr)
            return fail("Provider \"" + path + "\" dlsym(" + name + ") failed: " + p.library_.error());
    }
    p.sign_ = reinterpret_cast<sk_api::sign_fn>(sym("sk_sign"));
    p.enroll_ = reinterpret_cast<sk_api::enroll_fn>(sym("sk_enroll"));
    p.load_resident_ = reinterpret_cast<sk_api::load_resident_keys_fn>(sym("sk_load_resident_keys"));
    return p;
}

std::variant<std::vector<sk_resident_result>, sk_failure> sk_provider::load_resident_keys(
    const char* pin, const std::optional<std::string>& device) const
{
    std::string name = "device", value = device.value_or("");
    sk_api::sk_option option{name.data(), value.data(), 0};
    sk_api::sk_option* options[] = {&option, nullptr};
    sk_api::sk_resident_key** rks = nullptr;
    std::size_t n = 0;
    const int rc = load_resident_(pin, device ? options : nullptr, &rks, &n);
    // Everything the library returned is freed whatever happens.
    struct list_free {
        sk_api::sk_resident_key** rks;
        std::size_t n;
        ~list_free()
        {
            if (rks == nullptr)
                return;
            for (std::size_t i = 0; i < n; ++i) {
                if (rks[i] == nullptr)
                    continue;
                std::free(rks[i]->application);
                free_enroll_buffers(rks[i]->key);
                std::free(rks[i]->user_id);
                std::free(rks[i]);
            }
            std::free(rks);
        }
    } release{rks, rc == 0 ? n : 0};
    if (rc != 0)
        return library_failure(rc, "sk_load_resident_keys");
    if (n > max_sk_resident_keys || (n != 0 && rks == nullptr))
        return sk_failure{sk_api::err_general, "sk_load_resident_keys returned a bad list"};
    std::vector<sk_resident_result> out;
    for (std::size_t i = 0; i < n; ++i) {
        const sk_api::sk_resident_key* rk = rks[i];
        if (rk == nullptr || rk->application == nullptr ||
            ::strnlen(rk->application, max_sk_application + 1) > max_sk_application)
            return sk_failure{sk_api::err_general, "sk_load_resident_keys returned a bad entry"};
        sk_resident_result r;
        r.alg = rk->alg;
        r.application = rk->application;
        r.flags = rk->flags;
        r.key.flags = rk->key.flags;
        if (!copy_part(rk->key.public_key, rk->key.public_key_len, 65, r.key.public_key) ||
            !copy_part(rk->key.key_handle, rk->key.key_handle_len, max_sk_key_handle, r.key.key_handle) ||
            !copy_part(rk->user_id, rk->user_id_len, max_sk_user_id, r.user_id))
            return sk_failure{sk_api::err_general, "sk_load_resident_keys returned a bad entry"};
        out.push_back(std::move(r));
    }
    return out;
}

std::variant<sk_enroll_result, sk_failure> sk_provider::enroll(const sk_enroll_request& request, const char* pin) const
{
    const auto alg = sk_alg_of(request.type);
    if (!alg)
        return sk_failure{sk_api::err_unsupported, "not a security key"};
    // Ed25519: the 32 raw bytes; P-256: SEC1 uncompressed, 0x04 || X || Y.
    const std::size_t public_key_len = *alg == sk_api::alg_ed25519 ? 32 : 65;
    // The options as the ABI has them: a null-terminated array of pointers
    // to {name, value, required}, over strings that outlive the call.
    std::vector<std::pair<std::string, std::string>> named;
    if (request.device)
        named.emplace_back("device", *request.device);
    if (request.user)
        named.emplace_back("user", *request.user);
    std::vector<sk_api::sk_option> storage(named.size());
    std::vector<sk_api::sk_option*> options;
    for (std::size_t i = 0; i < named.size(); ++i) {
        storage[i] = {named[i].first.data(), named[i].second.data(), 0};
        options.push_back(&storage[i]);
    }
    options.push_back(nullptr);
    sk_api::sk_enroll_response* raw = nullptr;
    const int rc = enroll_(*alg, request.challenge.data(), request.challenge.size(), request.application.c_str(),
                           request.flags, pin, options.size() > 1 ? options.data() : nullptr, &raw);
    std::unique_ptr<sk_api::sk_enroll_response, enroll_response_free> resp(raw);
    if (rc != 0)
        return library_failure(rc, "sk_enroll");
    if (!resp)
        return sk_failure{sk_api::err_general, "sk_enroll returned no response"};
    sk_enroll_result out;
    out.flags = resp->flags;
    // Lengths come from the library: bounded before anything is copied.
    if (resp->public_key == nullptr || resp->public_key_len != public_key_len)
        return sk_failure{sk_api::err_general, "Authenticator returned invalid public key"};
    out.public_key.assign(resp->public_key, resp->public_key + resp->public_key_len);
    if (resp->key_handle == nullptr || resp->key_handle_len == 0 ||
        !copy_part(resp->key_handle, resp->key_handle_len, max_sk_key_handle, out.key_handle))
        return sk_failure{sk_api::err_general, "Authenticator returned invalid key handle"};
    if (!copy_part(resp->signature, resp->signature_len, max_sk_attestation_part, out.signature) ||
        !copy_part(resp->attestation_cert, resp->attestation_cert_len, max_sk_attestation_part,
                   out.attestation_cert) ||
        !copy_part(resp->authdata, resp->authdata_len, max_sk_attestation_part, out.authdata))
        return sk_failure{sk_api::err_general, "Authenticator returned invalid attestation"};
    return out;
}

std::variant<sk_sign_result, sk_failure> sk_provider::sign(key_type t, byte_span data, const std::string& application,
                                                           byte_span key_handle, std::uint8_t key_flags,
                                                           const char* pin) const
{
    const auto alg = sk_alg_of(t);
    if (!alg)
        return sk_failure{sk_api::err_unsupported, "not a security key"};
    sk_api::sk_sign_response* raw = nullptr;
    const int rc = sign_(*alg, data.data(), data.size(), application.c_str(), key_handle.data(), key_handle.size(),
                         key_flags, pin, nullptr, &raw);
    std::unique_ptr<sk_api::sk_sign_response, response_free> resp(raw);
    if (rc != 0)
        return library_failure(rc, "sk_sign");
    if (!resp)
        return sk_failure{sk_api::err_general, "sk_sign returned no response"};
    // Lengths come from the library: bounded before anything is copied.
    if (resp->sig_r == nullptr || resp->sig_r_len == 0 || resp->sig_r_len > max_sk_signature_part)
        return sk_failure{sk_api::err_general, "sk_sign returned a bad sig_r"};
    if (*alg == sk_api::alg_ecdsa &&
        (resp->sig_s == nullptr || resp->sig_s_len == 0 || resp->sig_s_len > max_sk_signature_part))
        return sk_failure{sk_api::err_general, "sk_sign returned a bad sig_s"};
    sk_sign_result out;
    out.flags = resp->flags;
    out.counter = resp->counter;
    out.sig_r.assign(resp->sig_r, resp->sig_r + resp->sig_r_len);
    if (*alg == sk_api::alg_ecdsa)
        out.sig_s.assign(resp->sig_s, resp->sig_s + resp->sig_s_len);
    return out;
}

} // namespace longhaul
