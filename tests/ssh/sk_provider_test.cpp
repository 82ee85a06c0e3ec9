// SecurityKeyProvider middleware (ssh/sk_provider.hpp): the SSH signature
// blobs built from sk_sign's answer, and the ABI wrapper against the
// software authenticator of the regress tests (regress/tools/
// sk_test_provider.cpp, built in the same tree): signatures it makes
// through the wrapper verify with the key it enrolled, PIN handling, and
// the refusals OpenSSH makes when loading a library.
#include "ssh/sk_provider.hpp"

#include "tests/skip.hpp"
#include "common/log.hpp"
#include "common/wire.hpp"
#include "ssh/sk_sign.hpp"

#include <dlfcn.h>

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

using namespace longhaul;

namespace {

bytes filled(std::size_t n, std::uint8_t v) { return bytes(n, v); }

// The enroll response of API 0x000a0000, to make keys with the provider
// (ssh itself never enrolls, so the wrapper has no enroll call).
struct enroll_response {
    std::uint8_t flags;
    std::uint8_t* public_key;
    std::size_t public_key_len;
    std::uint8_t* key_handle;
    std::size_t key_handle_len;
    std::uint8_t* signature;
    std::size_t signature_len;
    std::uint8_t* attestation_cert;
    std::size_t attestation_cert_len;
    std::uint8_t* authdata;
    std::size_t authdata_len;
};
using enroll_fn = int (*)(std::uint32_t, const std::uint8_t*, std::size_t, const char*, std::uint8_t, const char*,
                          void**, enroll_response**);

const char* test_provider_path()
{
#ifdef LONGHAUL_SK_TEST_PROVIDER
    if (std::filesystem::exists(LONGHAUL_SK_TEST_PROVIDER))
        return LONGHAUL_SK_TEST_PROVIDER;
#endif
    return nullptr;
}

struct enrolled {
    public_key key;
    bytes handle;
};

// A key made by the provider: its public key blob with application "ssh:".
std::optional<enrolled> enroll(const char* path, key_type t, std::uint8_t flags, const char* pin)
{
    void* h = dlopen(path, RTLD_NOW);
    if (h == nullptr)
        return std::nullopt;
    auto fn = reinterpret_cast<enroll_fn>(dlsym(h, "sk_enroll"));
    std::optional<enrolled> out;
    enroll_response* r = nullptr;
    const bytes challenge = filled(32, 7);
    const std::uint32_t alg = t == key_type::sk_ed25519 ? sk_api::alg_ed25519 : sk_api::alg_ecdsa;
    if (fn != nullptr && fn(alg, challenge.data(), challenge.size(), "ssh:", flags, pin, nullptr, &r) == 0 && r) {
        bytes blob;
        wire_writer w(blob);
        w.string(key_type_name(t));
        if (t == key_type::sk_ecdsa_p256)
            w.string("nistp256");
        w.string(byte_span(r->public_key, r->public_key_len)).string("ssh:");
        if (auto k = public_key::from_blob(blob))
            out = enrolled{std::move(*k), bytes(r->key_handle, r->key_handle + r->key_handle_len)};
    }
    if (r != nullptr) {
        std::free(r->public_key);
        std::free(r->key_handle);
        std::free(r->signature);
        std::free(r->attestation_cert);
        std::free(r->authdata);
        std::free(r);
    }
    dlclose(h);
    return out;
}

} // namespace

TEST_CASE("sk signature blob: Ed25519 is name, 64-byte signature, flags, counter")
{
    sk_sign_result r;
    r.flags = 0x05;
    r.counter = 0x01020304;
    r.sig_r = filled(64, 0xab);
    auto blob = encode_sk_signature(key_type::sk_ed25519, r);
    REQUIRE(blob);
    wire_reader rd(*blob);
    CHECK(rd.text(100) == "sk-ssh-ed25519@openssh.com");
    CHECK(to_bytes(rd.string(100)) == filled(64, 0xab));
    CHECK(rd.u8() == 0x05);
    CHECK(rd.u32() == 0x01020304);
    CHECK(rd.finish());

    r.sig_r = filled(63, 0xab);
    CHECK_FALSE(encode_sk_signature(key_type::sk_ed25519, r));
    CHECK_FALSE(encode_sk_signature(key_type::ed25519, r)); // not a security key
}

TEST_CASE("sk signature blob: ECDSA puts r and s as mpints in an inner string, flags and counter outside")
{
    sk_sign_result r;
    r.flags = 0x01;
    r.counter = 7;
    r.sig_r = bytes{0x00, 0x00, 0x81, 0x02}; // leading zeros go, the top bit gets a zero byte
    r.sig_s = bytes{0x11, 0x22};
    auto blob = encode_sk_signature(key_type::sk_ecdsa_p256, r);
    REQUIRE(blob);
    const bytes want = {0, 0, 0, 34, 's', 'k', '-', 'e', 'c', 'd', 's', 'a', '-', 's', 'h', 'a', '2', '-', 'n', 'i',
                        's', 't', 'p', '2', '5', '6', '@', 'o', 'p', 'e', 'n', 's', 's', 'h', '.', 'c', 'o', 'm',
                        0, 0, 0, 13, 0, 0, 0, 3, 0x00, 0x81, 0x02, 0, 0, 0, 2, 0x11, 0x22, 0x01, 0, 0, 0, 7};
    CHECK(*blob == want);

    r.sig_s.clear(); // s missing
    CHECK_FALSE(encode_sk_signature(key_type::sk_ecdsa_p256, r));
    r.sig_s = bytes{0, 0};  // zero
    CHECK_FALSE(encode_sk_signature(key_type::sk_ecdsa_p256, r));
    r.sig_s = filled(33, 1); // larger than the group
    CHECK_FALSE(encode_sk_signature(key_type::sk_ecdsa_p256, r));
    r.sig_s = bytes{0x00};
    r.sig_s.resize(33, 0x7f); // 33 bytes with a leading zero: fine
    CHECK(encode_sk_signature(key_type::sk_ecdsa_p256, r));
}

TEST_CASE("sk_provider: libraries OpenSSH refuses are refused with its words")
{
    auto missing = sk_provider::load("/nonexistent/sk-provider.so");
    REQUIRE(std::holds_alternative<sk_failure>(missing));
    CHECK(std::get<sk_failure>(missing).message.starts_with("Provider \"/nonexistent/sk-provider.so\" dlopen failed: "));

    // A real library without the entry points.
    auto libm = sk_provider::load("libm.so.6");
    REQUIRE(std::holds_alternative<sk_failure>(libm));
    CHECK(std::get<sk_failure>(libm).message.find("dlsym(sk_api_version) failed") != std::string::npos);
}

TEST_CASE("sk_provider: signatures through the test provider verify with the enrolled key")
{
    const char* path = test_provider_path();
    if (path == nullptr)
        LONGHAUL_SKIP("the test provider is not built (ninja sk_test_provider)");
    ::unsetenv("LH_SK_TEST_PIN");
    ::unsetenv("LH_SK_TEST_SIGN_FLAGS");
    auto loaded = sk_provider::load(path);
    REQUIRE(std::holds_alternative<sk_provider>(loaded));
    const sk_provider& p = std::get<sk_provider>(loaded);
    CHECK(p.api_version() == 0x000a0000);

    const bytes data = filled(300, 0x42);
    for (key_type t : {key_type::sk_ed25519, key_type::sk_ecdsa_p256}) {
        CAPTURE(key_type_name(t));
        auto k = enroll(path, t, sk_flag_user_presence, nullptr);
        REQUIRE(k);
        auto r = p.sign(t, data, "ssh:", k->handle, sk_flag_user_presence, nullptr);
        REQUIRE(std::holds_alternative<sk_sign_result>(r));
        auto blob = encode_sk_signature(t, std::get<sk_sign_result>(r));
        REQUIRE(blob);
        sk_signature_details details;
        CHECK(k->key.verify(key_type_name(t), data, *blob, &details));
        CHECK(details.flags == sk_flag_user_presence);
        // Another message, or another application, does not verify.
        CHECK_FALSE(k->key.verify(key_type_name(t), filled(300, 0x43), *blob));
        auto other_app = p.sign(t, data, "ssh:other", k->handle, sk_flag_user_presence, nullptr);
        REQUIRE(std::holds_alternative<sk_sign_result>(other_app));
        CHECK_FALSE(k->key.verify(key_type_name(t), data, *encode_sk_signature(t, std::get<sk_sign_result>(other_app))));
        // A handle the provider does not know is an error, not a crash.
        bytes bad = k->handle;
        bad.resize(5);
        CHECK(std::holds_alternative<sk_failure>(p.sign(t, data, "ssh:", bad, sk_flag_user_presence, nullptr)));
    }
}

TEST_CASE("sk_provider: a verify-required key wants the PIN (SSH_SK_ERR_PIN_REQUIRED), a wrong one fails")
{
    const char* path = test_provider_path();
    if (path == nullptr)
        LONGHAUL_SKIP("the test provider is not built (ninja sk_test_provider)");
    ::setenv("LH_SK_TEST_PIN", "2468", 1);
    auto loaded = sk_provider::load(path);
    REQUIRE(std::holds_alternative<sk_provider>(loaded));
    const sk_provider& p = std::get<sk_provider>(loaded);
    const std::uint8_t flags = sk_flag_user_presence | sk_flag_user_verification;
    auto k = enroll(path, key_type::sk_ed25519, flags, "2468");
    REQUIRE(k);
    const bytes data = filled(64, 1);
    auto no_pin = p.sign(key_type::sk_ed25519, data, "ssh:", k->handle, flags, nullptr);
    REQUIRE(std::holds_alternative<sk_failure>(no_pin));
    CHECK(std::get<sk_failure>(no_pin).code == sk_api::err_pin_required);
    auto wrong = p.sign(key_type::sk_ed25519, data, "ssh:", k->handle, flags, "1111");
    REQUIRE(std::holds_alternative<sk_failure>(wrong));
    auto right = p.sign(key_type::sk_ed25519, data, "ssh:", k->handle, flags, "2468");
    REQUIRE(std::holds_alternative<sk_sign_result>(right));
    sk_signature_details details;
    CHECK(k->key.verify("sk-ssh-ed25519@openssh.com", data,
                        *encode_sk_signature(key_type::sk_ed25519, std::get<sk_sign_result>(right)), &details));
    CHECK(details.flags == flags);
    ::unsetenv("LH_SK_TEST_PIN");
}

TEST_CASE("SecurityKeyProvider: internal unless SSH_SK_PROVIDER says otherwise; $VAR from the environment")
{
    logger log("ssh", log_level::quiet);
    ::unsetenv("SSH_SK_PROVIDER");
    CHECK(resolve_sk_provider(std::nullopt, log) == "internal");
    CHECK(resolve_sk_provider(std::string("internal"), log) == "internal");
    CHECK(resolve_sk_provider(std::string("/lib/p.so"), log) == "/lib/p.so");
    CHECK(resolve_sk_provider(std::string("$SSH_SK_PROVIDER"), log) == std::nullopt);
    ::setenv("SSH_SK_PROVIDER", "/env/p.so", 1);
    CHECK(resolve_sk_provider(std::string("internal"), log) == "/env/p.so");
    CHECK(resolve_sk_provider(std::string("$SSH_SK_PROVIDER"), log) == "/env/p.so");
    CHECK(resolve_sk_provider(std::string("/lib/p.so"), log) == "/lib/p.so"); // a named library wins
    ::unsetenv("SSH_SK_PROVIDER");
}
