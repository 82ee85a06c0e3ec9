// Round trips, truncation at every byte, trailing bytes and hostile fields
// for the user authentication message codecs.
#include "common/auth/messages.hpp"

#include "common/wire.hpp"
#include "tests/secret_text.hpp"

#include <doctest/doctest.h>

#include <functional>

using namespace longhaul;
using longhaul::test::secret;
using longhaul::test::str;

namespace {

// Every strict prefix of a valid encoding fails to decode, and so does the
// encoding with a byte appended.
template <class Decode>
void check_truncation_and_trailing(byte_span payload, Decode decode)
{
    for (std::size_t n = 0; n < payload.size(); ++n) {
        auto r = decode(payload.first(n));
        CHECK_MESSAGE(!r.has_value(), "prefix of length " << n << " decoded");
    }
    bytes longer(payload.begin(), payload.end());
    longer.push_back(0);
    auto r = decode(longer);
    REQUIRE(!r.has_value());
    CHECK(r.error() == errc::trailing_data);
}

userauth_request pubkey_request(bool signed_, bool hostbound)
{
    userauth_request req;
    req.user = "alice";
    req.service = "ssh-connection";
    req.method = hostbound ? std::string(method_publickey_hostbound) : std::string(method_publickey);
    userauth_publickey_data d;
    d.hostbound = hostbound;
    d.has_signature = signed_;
    d.algorithm = "rsa-sha2-512";
    d.key_blob = {1, 2, 3, 4};
    if (hostbound)
        d.host_key_blob = {9, 8, 7};
    if (signed_)
        d.signature = {5, 6};
    req.data = d;
    return req;
}

} // namespace

TEST_CASE("service request and accept round trip")
{
    service_request rq{"ssh-userauth"};
    auto e = rq.encode();
    CHECK(e[0] == msg::service_request);
    auto d = service_request::decode(e);
    REQUIRE(d.has_value());
    CHECK(d->service == "ssh-userauth");
    check_truncation_and_trailing(e, service_request::decode);

    service_accept ac{"ssh-userauth"};
    auto ea = ac.encode();
    auto da = service_accept::decode(ea);
    REQUIRE(da.has_value());
    CHECK(da->service == "ssh-userauth");
    check_truncation_and_trailing(ea, service_accept::decode);
    // The wrong message number is refused.
    CHECK(!service_accept::decode(e).has_value());
}

TEST_CASE("userauth request: none")
{
    userauth_request req{"bob", "ssh-connection", "none", userauth_none_data{}};
    auto e = req.encode();
    bytes expected;
    wire_writer(expected).u8(50).string("bob").string("ssh-connection").string("none");
    CHECK(e == expected);
    auto d = userauth_request::decode(e);
    REQUIRE(d.has_value());
    CHECK(d->user == "bob");
    CHECK(std::holds_alternative<userauth_none_data>(d->data));
    check_truncation_and_trailing(e, userauth_request::decode);
}

TEST_CASE("userauth request: publickey query, signed, hostbound")
{
    for (bool signed_ : {false, true}) {
        for (bool hostbound : {false, true}) {
            CAPTURE(signed_);
            CAPTURE(hostbound);
            auto req = pubkey_request(signed_, hostbound);
            auto e = req.encode();
            auto d = userauth_request::decode(e);
            REQUIRE(d.has_value());
            const auto* pk = std::get_if<userauth_publickey_data>(&d->data);
            REQUIRE(pk != nullptr);
            CHECK(pk->hostbound == hostbound);
            CHECK(pk->has_signature == signed_);
            CHECK(pk->algorithm == "rsa-sha2-512");
            CHECK(pk->key_blob == bytes{1, 2, 3, 4});
            CHECK(pk->host_key_blob == (hostbound ? bytes{9, 8, 7} : bytes{}));
            CHECK(pk->signature == (signed_ ? bytes{5, 6} : bytes{}));
            CHECK(d->encode() == e);
            check_truncation_and_trailing(e, userauth_request::decode);
        }
    }
}

TEST_CASE("publickey signed data is the session id then the request without the signature")
{
    const bytes sid = {0xaa, 0xbb, 0xcc};
    for (bool hostbound : {false, true}) {
        auto req = pubkey_request(true, hostbound);
        auto data = publickey_signed_data(sid, req);
        auto payload = req.encode();
        bytes expected;
        wire_writer(expected).string(sid);
        // The payload ends with string signature (4 + 2 bytes).
        expected.insert(expected.end(), payload.begin(), payload.end() - 6);
        CHECK(data == expected);
    }
}

TEST_CASE("userauth request: password with and without change")
{
    userauth_request req{"alice", "ssh-connection", "password", userauth_password_data{false, secret("hunter2"), {}}};
    auto e = req.encode_secret();
    auto d = userauth_request::decode(e);
    REQUIRE(d.has_value());
    auto* pw = std::get_if<userauth_password_data>(&d->data);
    REQUIRE(pw != nullptr);
    CHECK(!pw->change);
    CHECK(str(pw->password) == "hunter2");
    check_truncation_and_trailing(e.span(), userauth_request::decode);

    userauth_request ch{"alice", "ssh-connection", "password",
                        userauth_password_data{true, secret("old"), secret("new")}};
    auto ec = ch.encode();
    CHECK(to_bytes(ch.encode_secret().span()) == ec);
    auto dc = userauth_request::decode(ec);
    REQUIRE(dc.has_value());
    auto* pc = std::get_if<userauth_password_data>(&dc->data);
    REQUIRE(pc != nullptr);
    CHECK(pc->change);
    CHECK(str(pc->password) == "old");
    CHECK(str(pc->new_password) == "new");
    check_truncation_and_trailing(ec, userauth_request::decode);
}

TEST_CASE("userauth request: keyboard-interactive and unknown methods")
{
    userauth_request req{"alice", "ssh-connection", "keyboard-interactive", userauth_kbdint_data{"", "pam"}};
    auto e = req.encode();
    auto d = userauth_request::decode(e);
    REQUIRE(d.has_value());
    auto* k = std::get_if<userauth_kbdint_data>(&d->data);
    REQUIRE(k != nullptr);
    CHECK(k->submethods == "pam");
    check_truncation_and_trailing(e, userauth_request::decode);

    // Unknown methods keep their bytes (no trailing-data check possible).
    userauth_request other{"alice", "ssh-connection", "gssapi-with-mic", userauth_other_data{{1, 2, 3}}};
    auto eo = other.encode();
    auto dof = userauth_request::decode(eo);
    REQUIRE(dof.has_value());
    CHECK(std::get<userauth_other_data>(dof->data).data == bytes{1, 2, 3});
}

TEST_CASE("userauth request: hostbased, and what its signature covers")
{
    userauth_hostbased_data hd{"ssh-ed25519", {9, 9, 9}, "client.example.", "alice", {7, 7}};
    userauth_request req{"bob", "ssh-connection", "hostbased", hd};
    auto e = req.encode();
    auto d = userauth_request::decode(e);
    REQUIRE(d.has_value());
    auto* h = std::get_if<userauth_hostbased_data>(&d->data);
    REQUIRE(h != nullptr);
    CHECK(h->algorithm == "ssh-ed25519");
    CHECK(h->key_blob == bytes{9, 9, 9});
    CHECK(h->client_host == "client.example.");
    CHECK(h->client_user == "alice");
    CHECK(h->signature == bytes{7, 7});
    check_truncation_and_trailing(e, userauth_request::decode);

    // RFC 4252 section 9: session id, then the request up to the signature.
    bytes want;
    wire_writer(want)
        .string(bytes{1, 2})
        .u8(50)
        .string("bob")
        .string("ssh-connection")
        .string("hostbased")
        .string("ssh-ed25519")
        .string(bytes{9, 9, 9})
        .string("client.example.")
        .string("alice");
    CHECK(publickey_signed_data(bytes{1, 2}, req) == want);

    // A NUL in the client's names is refused, as OpenSSH reads C strings.
    bytes nul;
    wire_writer(nul)
        .u8(50)
        .string("bob")
        .string("ssh-connection")
        .string("hostbased")
        .string("ssh-ed25519")
        .string(bytes{9})
        .string(std::string_view("cl\0ient", 7))
        .string("alice")
        .string(bytes{7});
    CHECK(!userauth_request::decode(nul).has_value());
}

TEST_CASE("NUL bytes in text fields are rejected")
{
    bytes p;
    wire_writer(p).u8(50).string(std::string_view("ali\0ce", 6)).string("ssh-connection").string("none");
    auto d = userauth_request::decode(p);
    REQUIRE(!d.has_value());
    CHECK(d.error() == errc::malformed);

    bytes pw;
    wire_writer(pw).u8(50).string("a").string("ssh-connection").string("password").u8(0).string(
        std::string_view("x\0y", 3));
    CHECK(!userauth_request::decode(pw).has_value());

    bytes ir;
    wire_writer(ir).u8(60).string("").string("").string("").u32(1).string(std::string_view("P\0", 2)).u8(0);
    CHECK(!userauth_info_request::decode(ir).has_value());
}

TEST_CASE("failure, success, banner round trip")
{
    userauth_failure f{"publickey,password", true};
    auto e = f.encode();
    auto d = userauth_failure::decode(e);
    REQUIRE(d.has_value());
    CHECK(d->methods == "publickey,password");
    CHECK(d->partial_success);
    check_truncation_and_trailing(e, userauth_failure::decode);

    auto s = userauth_success{}.encode();
    CHECK(s == bytes{52});
    CHECK(userauth_success::decode(s).has_value());
    check_truncation_and_trailing(s, userauth_success::decode);

    userauth_banner b{"Welcome\n", ""};
    auto eb = b.encode();
    auto db = userauth_banner::decode(eb);
    REQUIRE(db.has_value());
    CHECK(db->message == "Welcome\n");
    check_truncation_and_trailing(eb, userauth_banner::decode);
}

TEST_CASE("message 60 variants and info response")
{
    userauth_pk_ok ok{"ssh-ed25519", {1, 2, 3}};
    auto e1 = ok.encode();
    auto d1 = userauth_pk_ok::decode(e1);
    REQUIRE(d1.has_value());
    CHECK(d1->algorithm == "ssh-ed25519");
    CHECK(d1->key_blob == bytes{1, 2, 3});
    check_truncation_and_trailing(e1, userauth_pk_ok::decode);

    userauth_passwd_changereq cr{"Password expired", ""};
    auto e2 = cr.encode();
    auto d2 = userauth_passwd_changereq::decode(e2);
    REQUIRE(d2.has_value());
    CHECK(d2->prompt == "Password expired");
    check_truncation_and_trailing(e2, userauth_passwd_changereq::decode);

    userauth_info_request ir{"PAM", "Say the word", "", {{"Password: ", false}, {"Name: ", true}}};
    auto e3 = ir.encode();
    auto d3 = userauth_info_request::decode(e3);
    REQUIRE(d3.has_value());
    CHECK(d3->name == "PAM");
    CHECK(d3->instruction == "Say the word");
    CHECK(d3->prompts == ir.prompts);
    check_truncation_and_trailing(e3, userauth_info_request::decode);

    userauth_info_response rs;
    rs.responses.push_back(secret("pw"));
    rs.responses.push_back(secret(""));
    auto e4 = rs.encode();
    auto d4 = userauth_info_response::decode(e4);
    REQUIRE(d4.has_value());
    REQUIRE(d4->responses.size() == 2);
    CHECK(str(d4->responses[0]) == "pw");
    CHECK(d4->responses[1].empty());
    check_truncation_and_trailing(e4.span(), userauth_info_response::decode);
}

TEST_CASE("prompt and response counts are bounded")
{
    bytes ir;
    wire_writer w(ir);
    w.u8(60).string("").string("").string("").u32(101);
    for (int i = 0; i < 101; ++i)
        w.string("p").u8(0);
    auto d = userauth_info_request::decode(ir);
    REQUIRE(!d.has_value());
    CHECK(d.error() == errc::too_large);

    // A huge count with no data behind it is refused before allocating.
    bytes rs;
    wire_writer(rs).u8(61).u32(0xffffffff);
    auto r = userauth_info_response::decode(rs);
    REQUIRE(!r.has_value());
    CHECK(r.error() == errc::too_large);

    bytes rs2;
    wire_writer(rs2).u8(61).u32(100);
    CHECK(!userauth_info_response::decode(rs2).has_value());
}

TEST_CASE("over-long name fields are refused")
{
    bytes p;
    wire_writer(p).u8(50).string(std::string(max_auth_name + 1, 'a')).string("ssh-connection").string("none");
    auto d = userauth_request::decode(p);
    REQUIRE(!d.has_value());
    CHECK(d.error() == errc::too_large);
}
