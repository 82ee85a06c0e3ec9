#include "agent_test_util.hpp"

using namespace agent_test;

namespace {

bytes bind_request(const public_key& host, byte_span sid, byte_span sig, bool forwarded)
{
    bytes b;
    wire_writer(b).u8(agent::extension).string(session_bind_extension).string(host.blob()).string(sid).string(sig).u8(
        forwarded ? 1 : 0);
    return b;
}

bytes session_id(std::uint8_t fill)
{
    return bytes(32, fill);
}

} // namespace

TEST_CASE("agent session-bind: a good signature is recorded")
{
    harness h;
    for (auto t : {key_type::ed25519, key_type::ecdsa_p256, key_type::rsa}) {
        harness one;
        const auto& host = test_key(t);
        const bytes sid = session_id(1);
        auto sig = host.sign(signature_algorithms_for(t).front(), sid);
        REQUIRE(sig);
        CHECK(one.type_of(bind_request(host.public_part(), sid, *sig, false)) == success);
        REQUIRE(one.conn.bindings.size() == 1);
        CHECK(one.conn.bindings[0].session_id == sid);
        CHECK(!one.conn.bindings[0].forwarded);
    }
}

TEST_CASE("agent session-bind: bad signatures and wrong keys are refused")
{
    harness h;
    const auto& host = test_key(key_type::ed25519);
    const bytes sid = session_id(2);
    auto sig = *host.sign("ssh-ed25519", sid);
    bytes bad = sig;
    bad.back() ^= 1;
    CHECK(h.type_of(bind_request(host.public_part(), sid, bad, false)) == failure);
    // Signed by another key.
    auto other = *test_key(key_type::ecdsa_p256).sign("ecdsa-sha2-nistp256", sid);
    CHECK(h.type_of(bind_request(host.public_part(), sid, other, false)) == failure);
    // Over another session id.
    CHECK(h.type_of(bind_request(host.public_part(), session_id(3), sig, false)) == failure);
    // A session id over OpenSSH's 128-byte limit.
    const bytes long_sid(129, 4);
    CHECK(h.type_of(bind_request(host.public_part(), long_sid, *host.sign("ssh-ed25519", long_sid), false)) == failure);
    // Truncated.
    bytes req = bind_request(host.public_part(), sid, sig, false);
    for (std::size_t n = 1; n < req.size(); ++n)
        CHECK(h.type_of(byte_span(req).first(n)) == failure);
    CHECK(h.conn.bindings.empty());
}

TEST_CASE("agent session-bind: binding rules per connection")
{
    harness h;
    const auto& host = test_key(key_type::ed25519);
    const auto& host2 = test_key(key_type::ecdsa_p256);
    auto bind = [&](const private_key& k, const bytes& sid, bool fwd) {
        return h.type_of(bind_request(k.public_part(), sid, *k.sign(signature_algorithms_for(k.type()).front(), sid), fwd));
    };
    // Forwarded hops may add bindings; the same one twice is fine.
    CHECK(bind(host, session_id(1), true) == success);
    CHECK(bind(host, session_id(1), true) == success);
    CHECK(h.conn.bindings.size() == 1);
    // The same session id with another key is refused.
    CHECK(bind(host2, session_id(1), true) == failure);
    CHECK(bind(host2, session_id(2), false) == success);
    // After a binding for authentication, nothing more.
    CHECK(bind(host, session_id(3), true) == failure);
    // At most 16 per connection.
    harness many;
    for (int i = 0; i < 16; ++i)
        CHECK(many.type_of(bind_request(host.public_part(), session_id(std::uint8_t(i)),
                                        *host.sign("ssh-ed25519", session_id(std::uint8_t(i))), true)) == success);
    CHECK(many.type_of(bind_request(host.public_part(), session_id(99), *host.sign("ssh-ed25519", session_id(99)),
                                    true)) == failure);
}
