// What ssh-keygen -K and ssh-add -K share (ssh/sk/sk_tool.hpp): which
// resident credentials OpenSSH keeps and with which flags, OpenSSH's words
// for the middleware's codes, the built-in provider refused in words.
#include "ssh/sk/sk_tool.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

bytes from_hex(std::string_view hex)
{
    bytes out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
    return out;
}

// The P-256 generator, a point on the curve.
bytes p256_point()
{
    return from_hex("046B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296"
                    "4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5");
}

sk_resident_result credential(std::uint32_t alg, std::string application, bytes public_key, std::uint8_t flags,
                              std::uint8_t handle)
{
    sk_resident_result r;
    r.alg = alg;
    r.application = std::move(application);
    r.key.public_key = std::move(public_key);
    r.key.key_handle = bytes(16, handle);
    r.flags = flags;
    r.user_id = bytes(32, handle);
    return r;
}

} // namespace

TEST_CASE("resident credentials: ssh: applications of Ed25519 and P-256 kept, in order, with a resident key's flags")
{
    std::vector<sk_resident_result> listed;
    listed.push_back(credential(sk_api::alg_ed25519, "ssh:", bytes(32, 7), 0x01, 1));
    listed.push_back(credential(sk_api::alg_ecdsa, "web:site", p256_point(), 0x01, 2)); // not ssh:
    listed.push_back(credential(99, "ssh:other", bytes(32, 7), 0x01, 3));             // unknown algorithm
    // Verify-required kept; any other flag the authenticator reports is not.
    listed.push_back(credential(sk_api::alg_ecdsa, "ssh:work", p256_point(),
                                sk_api::flag_user_verification_required | 0x40, 4));
    auto kept = resident_records(std::move(listed));
    REQUIRE(kept.has_value());
    REQUIRE(kept->size() == 2);
    const auto& ed = (*kept)[0];
    CHECK(ed.record.key.type() == key_type::sk_ed25519);
    CHECK(ed.record.comment == "ssh:");
    CHECK(ed.record.flags == (sk_api::flag_user_presence_required | sk_api::flag_resident_key));
    CHECK(ed.record.key_handle == bytes(16, 1));
    CHECK(ed.user_id == bytes(32, 1));
    const auto& ec = (*kept)[1];
    CHECK(ec.record.key.type() == key_type::sk_ecdsa_p256);
    CHECK(ec.record.comment == "ssh:work");
    CHECK(ec.record.flags == (sk_api::flag_user_presence_required | sk_api::flag_resident_key |
                              sk_api::flag_user_verification_required));
    CHECK(ec.record.key_handle == bytes(16, 4));
}

TEST_CASE("resident credentials: a kept one whose key is not of its type's form fails the listing")
{
    std::vector<sk_resident_result> listed;
    listed.push_back(credential(sk_api::alg_ed25519, "ssh:", bytes(31, 7), 0, 1));
    CHECK(!resident_records(std::move(listed)).has_value());
    bytes off_curve = p256_point();
    off_curve.back() ^= 1;
    listed.clear();
    listed.push_back(credential(sk_api::alg_ecdsa, "ssh:", off_curve, 0, 1));
    CHECK(!resident_records(std::move(listed)).has_value());
    // One that is skipped is not looked at.
    listed.clear();
    listed.push_back(credential(sk_api::alg_ed25519, "web:x", bytes(3, 7), 0, 1));
    auto none = resident_records(std::move(listed));
    REQUIRE(none.has_value());
    CHECK(none->empty());
}

TEST_CASE("sk tools: OpenSSH's words for the middleware's codes; the built-in provider not supported yet")
{
    CHECK(std::string(sk_error_text(sk_api::err_device_not_found)) == "device not found");
    CHECK(std::string(sk_error_text(sk_api::err_pin_required)) ==
          "incorrect passphrase supplied to decrypt private key");
    CHECK(std::string(sk_error_text(sk_api::err_general)) == "invalid format");
    std::string why;
    CHECK(!load_sk_provider("internal", "-S", why).has_value());
    CHECK(why.find("not supported yet") != std::string::npos);
    CHECK(why.find("-S") != std::string::npos);
}
