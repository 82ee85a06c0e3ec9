// SecurityKeyProvider middleware (ssh/sk/sk_provider.hpp): the SSH signature
// blobs built from sk_sign's answer, and the ABI wrapper against the
// software authenticator of the regress tests (regress/tools/
// sk_test_provider.cpp, built in the same tree): signatures it makes
// through the wrapper verify with the key it enrolled, PIN handling, and
// the refusals OpenSSH makes when loading a library, enrolment.
#include "ssh/sk/sk_provider.hpp"

#include "tests/skip.hpp"
#include "common/log.hpp"
#include "common/wire.hpp"
#include "ssh/sk_sign.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace longhaul;

namespace {

bytes filled(std::size_t n, std::uint8_t v) { return bytes(n, v); }

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

// The path of a library this process has mapped (from /proc/self/maps;
// dladdr would name the sanitizer runtime's interceptor instead).
std::string mapped_library(const std::string& name)
{
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        const auto slash = line.find('/');
        if (slash != std::string::npos && line.ends_with("/" + name))
            return line.substr(slash);
    }
    return {};
}

// The test provider, loaded; nullopt when it is not built.
std::optional<sk_provider> load_test_provider()
{
    const char* path = test_provider_path();
    if (path == nullptr)
        return std::nullopt;
    auto loaded = sk_provider::load(path);
    REQUIRE(std::holds_alternative<sk_provider>(loaded));
    return std::move(std::get<sk_provider>(loaded));
}

// A key made by the provider through the wrapper, application "ssh:".
std::optional<enrolled> enroll(const char* path, key_type t, std::uint8_t flags, const char* pin)
{
    auto loaded = sk_provider::load(path);
    if (!std::holds_alternative<sk_provider>(loaded))
        return std::nullopt;
    sk_enroll_request req;
    req.type = t;
    req.challenge = filled(32, 7);
    req.flags = flags;
    auto r = std::get<sk_provider>(loaded).enroll(req, pin);
    auto* ok = std::get_if<sk_enroll_result>(&r);
    if (ok == nullptr)
        return std::nullopt;
    auto key = sk_enrolled_public_key(t, *ok, "ssh:");
    if (!key)
        return std::nullopt;
    return enrolled{std::move(*key), ok->key_handle};
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
    CHECK(std::get<sk_failure>(missing).cause ==
          "lib_contains_symbol: open /nonexistent/sk-provider.so: No such file or directory");
    CHECK(std::get<sk_failure>(missing).message ==
          "provider /nonexistent/sk-provider.so is not an OpenSSH FIDO library");

    // A real library without the entry points is never opened: its bytes
    // do not hold the name.
    const std::string libc_path = mapped_library("libc.so.6");
    REQUIRE_FALSE(libc_path.empty());
    auto libc = sk_provider::load(libc_path);
    REQUIRE(std::holds_alternative<sk_failure>(libc));
    CHECK(std::get<sk_failure>(libc).cause ==
          "lib_contains_symbol: " + libc_path + " does not contain expected string sk_api_version");

    // A file that holds the name but is no library gets as far as dlopen.
    const auto dir = std::filesystem::temp_directory_path() / ("lh-sk-lib-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string fake = (dir / "fake.so").string();
    std::FILE* f = std::fopen(fake.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("not ELF, but it names sk_api_version\n", f);
    std::fclose(f);
    CHECK(check_library_file(fake, "sk_api_version").empty());
    auto fake_loaded = sk_provider::load(fake);
    REQUIRE(std::holds_alternative<sk_failure>(fake_loaded));
    CHECK(std::get<sk_failure>(fake_loaded).message.starts_with("Provider \"" + fake + "\" dlopen failed: "));

    // Not regular files, and a file shorter than the name.
    CHECK(check_library_file(dir.string(), "sk_api_version") ==
          "lib_contains_symbol: " + dir.string() + " is not a regular file");
    CHECK(check_library_file("/dev/null", "sk_api_version") == "lib_contains_symbol: /dev/null is not a regular file");
    const std::string tiny = (dir / "tiny").string();
    f = std::fopen(tiny.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("tiny\n", f);
    std::fclose(f);
    CHECK(check_library_file(tiny, "sk_api_version") == "lib_contains_symbol: " + tiny + " bad size 5");
    std::filesystem::remove_all(dir);
}

TEST_CASE("sk_provider: enrolment through the test provider, its answer copied and checked")
{
    auto loaded = load_test_provider();
    if (!loaded)
        LONGHAUL_SKIP("the test provider is not built (ninja sk_test_provider)");
    const sk_provider& p = *loaded;
    ::unsetenv("LH_SK_TEST_PIN");
    ::unsetenv("LH_SK_TEST_ENROLL_ERROR");
    ::unsetenv("LH_SK_TEST_CREDENTIAL_EXISTS");
    for (key_type t : {key_type::sk_ed25519, key_type::sk_ecdsa_p256}) {
        CAPTURE(key_type_name(t));
        sk_enroll_request req;
        req.type = t;
        req.challenge = filled(32, 9);
        req.application = "ssh:enrol";
        req.flags = sk_api::flag_user_presence_required | sk_api::flag_resident_key;
        req.device = "/dev/null";
        req.user = "someone";
        auto r = p.enroll(req, nullptr);
        REQUIRE(std::holds_alternative<sk_enroll_result>(r));
        const auto& e = std::get<sk_enroll_result>(r);
        CHECK(e.flags == req.flags); // the test provider answers with the flags asked for
        CHECK(e.public_key.size() == (t == key_type::sk_ed25519 ? 32u : 65u));
        CHECK_FALSE(e.key_handle.empty());
        CHECK(std::string(e.attestation_cert.begin(), e.attestation_cert.end()) == "LHSKTP certificate");
        CHECK(std::string(e.signature.begin(), e.signature.end()) == "LHSKTP attestation signature");
        CHECK(std::string(e.authdata.begin(), e.authdata.end()) == "LHSKTP authenticator data");
        auto key = sk_enrolled_public_key(t, e, req.application);
        REQUIRE(key);
        CHECK(key->type() == t);
        CHECK(key->application() == "ssh:enrol");
        // The key signs through the same provider.
        const bytes data = filled(100, 3);
        auto sig = p.sign(t, data, req.application, e.key_handle, e.flags, nullptr);
        REQUIRE(std::holds_alternative<sk_sign_result>(sig));
        CHECK(key->verify(key_type_name(t), data, *encode_sk_signature(t, std::get<sk_sign_result>(sig))));
        // A public key of the wrong form is no key: an Ed25519 key's bytes
        // as a P-256 point, a point off the curve.
        sk_enroll_result bad = e;
        bad.public_key.resize(t == key_type::sk_ed25519 ? 31 : 65);
        if (t == key_type::sk_ecdsa_p256)
            bad.public_key[64] ^= 0x01;
        CHECK_FALSE(sk_enrolled_public_key(t, bad, "ssh:"));
    }
    CHECK(std::holds_alternative<sk_failure>(p.enroll(sk_enroll_request{key_type::ed25519}, nullptr)));
}

TEST_CASE("sk_provider: enrolment failures keep the middleware's code")
{
    auto loaded = load_test_provider();
    if (!loaded)
        LONGHAUL_SKIP("the test provider is not built (ninja sk_test_provider)");
    const sk_provider& p = *loaded;
    sk_enroll_request req;
    req.challenge = filled(32, 1);
    for (int code : {sk_api::err_general, sk_api::err_unsupported, sk_api::err_device_not_found}) {
        CAPTURE(code);
        ::setenv("LH_SK_TEST_ENROLL_ERROR", std::to_string(code).c_str(), 1);
        auto r = p.enroll(req, nullptr);
        REQUIRE(std::holds_alternative<sk_failure>(r));
        CHECK(std::get<sk_failure>(r).code == code);
        CHECK(std::get<sk_failure>(r).from_library);
    }
    ::unsetenv("LH_SK_TEST_ENROLL_ERROR");
    // A PIN wanted, then given.
    ::setenv("LH_SK_TEST_PIN", "1357", 1);
    req.flags = sk_api::flag_user_presence_required | sk_api::flag_user_verification_required;
    auto no_pin = p.enroll(req, nullptr);
    REQUIRE(std::holds_alternative<sk_failure>(no_pin));
    CHECK(std::get<sk_failure>(no_pin).code == sk_api::err_pin_required);
    CHECK(std::holds_alternative<sk_enroll_result>(p.enroll(req, "1357")));
    ::unsetenv("LH_SK_TEST_PIN");
    // A resident credential that exists, then replaced by force.
    ::setenv("LH_SK_TEST_CREDENTIAL_EXISTS", "1", 1);
    req.flags = sk_api::flag_user_presence_required | sk_api::flag_resident_key;
    auto exists = p.enroll(req, nullptr);
    REQUIRE(std::holds_alternative<sk_failure>(exists));
    CHECK(std::get<sk_failure>(exists).code == sk_api::err_credential_exists);
    req.flags |= sk_api::flag_force_operation;
    CHECK(std::holds_alternative<sk_enroll_result>(p.enroll(req, nullptr)));
    ::unsetenv("LH_SK_TEST_CREDENTIAL_EXISTS");
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

TEST_CASE("sk_provider: resident credentials listed through the test provider")
{
    auto loaded = load_test_provider();
    if (!loaded)
        LONGHAUL_SKIP("the test provider is not built (ninja sk_test_provider)");
    const sk_provider& p = *loaded;
    ::unsetenv("LH_SK_TEST_PIN");
    ::unsetenv("LH_SK_TEST_RESIDENT_DIR");
    // Without a store the middleware cannot list: its code is kept.
    auto none = p.load_resident_keys(nullptr, std::nullopt);
    REQUIRE(std::holds_alternative<sk_failure>(none));
    CHECK(std::get<sk_failure>(none).code == sk_api::err_unsupported);

    const auto dir = std::filesystem::temp_directory_path() / ("lh-sk-rk-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    ::setenv("LH_SK_TEST_RESIDENT_DIR", dir.c_str(), 1);
    sk_enroll_request req;
    req.type = key_type::sk_ecdsa_p256;
    req.challenge = filled(32, 5);
    req.application = "ssh:rk";
    req.user = "bob";
    req.flags = sk_api::flag_user_presence_required | sk_api::flag_resident_key;
    auto e = p.enroll(req, nullptr);
    REQUIRE(std::holds_alternative<sk_enroll_result>(e));
    auto listed = p.load_resident_keys("", std::string("/dev/null"));
    REQUIRE(std::holds_alternative<std::vector<sk_resident_result>>(listed));
    const auto& rks = std::get<std::vector<sk_resident_result>>(listed);
    REQUIRE(rks.size() == 1);
    CHECK(rks[0].alg == sk_api::alg_ecdsa);
    CHECK(rks[0].application == "ssh:rk");
    CHECK(rks[0].key.public_key == std::get<sk_enroll_result>(e).public_key);
    CHECK(rks[0].key.key_handle == std::get<sk_enroll_result>(e).key_handle);
    bytes bob(32, 0);
    bob[0] = 'b', bob[1] = 'o', bob[2] = 'b';
    CHECK(rks[0].user_id == bob);
    // The same application and user again: the credential exists.
    auto again = p.enroll(req, nullptr);
    REQUIRE(std::holds_alternative<sk_failure>(again));
    CHECK(std::get<sk_failure>(again).code == sk_api::err_credential_exists);
    // Listing wants the PIN when the authenticator has one.
    ::setenv("LH_SK_TEST_PIN", "9999", 1);
    auto no_pin = p.load_resident_keys("", std::nullopt);
    REQUIRE(std::holds_alternative<sk_failure>(no_pin));
    CHECK(std::get<sk_failure>(no_pin).code == sk_api::err_pin_required);
    CHECK(std::holds_alternative<std::vector<sk_resident_result>>(p.load_resident_keys("9999", std::nullopt)));
    ::unsetenv("LH_SK_TEST_PIN");
    ::unsetenv("LH_SK_TEST_RESIDENT_DIR");
    std::filesystem::remove_all(dir);
}

