// Destination constraints (ssh-add -h): the constraint parser, the
// userauth-request parser and hop matching as pure functions, then the
// core's SIGN_REQUEST and REQUEST_IDENTITIES on bound connections.
#include "agent_test_util.hpp"

#include "ssh/agent/agent_destination.hpp"

#include <utility>

using namespace agent_test;

namespace {

const private_key& host_a()
{
    static const private_key k = *private_key::generate(key_type::ed25519);
    return k;
}
const private_key& host_b()
{
    static const private_key k = *private_key::generate(key_type::ed25519);
    return k;
}
const private_key& host_ca()
{
    static const private_key k = *private_key::generate(key_type::ed25519);
    return k;
}

struct hop_spec {
    std::string user;
    std::string host;
    std::vector<std::pair<const public_key*, bool>> keys; // key, is CA
};

bytes hop_bytes(const hop_spec& h, std::string_view reserved = {})
{
    bytes b;
    wire_writer w(b);
    w.string(h.user).string(h.host).string(reserved);
    for (const auto& [k, ca] : h.keys)
        w.string(k->blob()).u8(ca ? 1 : 0);
    return b;
}

bytes constraint_bytes(const hop_spec& from, const hop_spec& to, std::string_view reserved = {})
{
    bytes b;
    wire_writer(b).string(hop_bytes(from)).string(hop_bytes(to)).string(reserved);
    return b;
}

// The extension's data: string of the constraints.
bytes dest_data(const std::vector<bytes>& constraints)
{
    bytes all;
    for (const auto& c : constraints)
        wire_writer(all).string(c);
    bytes b;
    wire_writer(b).string(all);
    return b;
}

bytes dest_constraint_ext(const std::vector<bytes>& constraints)
{
    bytes b;
    wire_writer(b).u8(constrain_extension).string(restrict_destination_extension).raw(dest_data(constraints));
    return b;
}

const hop_spec origin{};
hop_spec to_host(const private_key& k, std::string host = "a.example", std::string user = "")
{
    return {std::move(user), std::move(host), {{&k.public_part(), false}}};
}

bytes userauth(byte_span sid, std::string_view user, byte_span key_blob, const public_key* hostbound = nullptr,
               std::string_view service = "ssh-connection", std::uint8_t sig_follows = 1)
{
    bytes b;
    wire_writer w(b);
    w.string(sid).u8(50).string(user).string(service);
    w.string(hostbound ? "publickey-hostbound-v00@openssh.com" : "publickey").u8(sig_follows).string("ssh-ed25519");
    w.string(key_blob);
    if (hostbound)
        w.string(hostbound->blob());
    return b;
}

bytes sid_of(std::uint8_t fill)
{
    return bytes(32, fill);
}

bytes bind_req(const private_key& host, byte_span sid, bool forwarded)
{
    bytes b;
    wire_writer(b).u8(agent::extension).string(session_bind_extension).string(host.public_part().blob()).string(sid).string(
        *host.sign("ssh-ed25519", sid)).u8(forwarded ? 1 : 0);
    return b;
}

session_binding binding(const private_key& host, std::uint8_t sid, bool forwarded)
{
    return {host.public_part().blob(), host.public_part(), std::nullopt, sid_of(sid), forwarded};
}

std::vector<dest_constraint> parsed(const std::vector<bytes>& constraints)
{
    const bytes data = dest_data(constraints);
    wire_reader r(data);
    std::string why;
    auto c = parse_dest_constraints(r, why);
    REQUIRE(c);
    return *c;
}

const private_key& user_key()
{
    return test_key(key_type::ed25519);
}

} // namespace

TEST_CASE("agent destination: constraint parsing")
{
    std::string why;
    auto c = parsed({constraint_bytes(origin, to_host(host_a(), "a", "u*")),
                     constraint_bytes(to_host(host_a(), "a"), to_host(host_b(), "b"))});
    REQUIRE(c.size() == 2);
    CHECK(c[0].from.hostname.empty());
    CHECK(c[0].to.user == "u*");
    CHECK(c[1].from.keys.size() == 1);
    CHECK(describe(c[0]) == "(ORIGIN) (0 keys) > u*@a (1 keys)");

    auto refused = [&](const bytes& data) {
        wire_reader r(data);
        return !parse_dest_constraints(r, why);
    };
    // Truncated anywhere.
    const bytes good = dest_data({constraint_bytes(origin, to_host(host_a()))});
    for (std::size_t n = 0; n < good.size(); ++n)
        CHECK(refused(bytes(good.begin(), good.begin() + std::ptrdiff_t(n))));
    // Reserved fields, inconsistent "from", incomplete "to".
    CHECK(refused(dest_data({constraint_bytes(origin, to_host(host_a()), "x")})));
    {
        bytes c1;
        wire_writer(c1).string(hop_bytes(origin)).string(hop_bytes(to_host(host_a()), "x")).string("");
        CHECK(refused(dest_data({c1})));
    }
    CHECK(refused(dest_data({constraint_bytes({"", "a", {}}, to_host(host_a()))})));
    CHECK(refused(dest_data({constraint_bytes({"u", "", {}}, to_host(host_a()))})));
    CHECK(refused(dest_data({constraint_bytes(origin, {"", "a", {}})})));
    CHECK(refused(dest_data({constraint_bytes(origin, to_host(host_a(), ""))})));
    // Oversized: names, keys per hop, constraints.
    CHECK(refused(dest_data({constraint_bytes(origin, to_host(host_a(), std::string(max_hop_name + 1, 'h')))})));
    CHECK(refused(dest_data({constraint_bytes(origin, to_host(host_a(), "a", std::string(max_hop_name + 1, 'u')))})));
    hop_spec many{"", "a", {}};
    for (std::size_t i = 0; i <= max_hop_keys; ++i)
        many.keys.push_back({&host_a().public_part(), false});
    CHECK(refused(dest_data({constraint_bytes(origin, many)})));
    many.keys.pop_back();
    CHECK(!refused(dest_data({constraint_bytes(origin, many)})));
    std::vector<bytes> lots(max_dest_constraints + 1, constraint_bytes(origin, to_host(host_a())));
    CHECK(refused(dest_data(lots)));
    lots.pop_back();
    CHECK(!refused(dest_data(lots)));
    // A NUL inside a name.
    CHECK(refused(dest_data({constraint_bytes(origin, to_host(host_a(), std::string("a\0b", 3)))})));
}

TEST_CASE("agent destination: ADD_ID_CONSTRAINED with -h")
{
    harness h;
    const auto& k = user_key();
    auto ext = dest_constraint_ext({constraint_bytes(origin, to_host(host_a()))});
    CHECK(h.type_of(add_request(k, nullptr, "dest", ext)) == success);
    REQUIRE(h.core.keys().size() == 1);
    CHECK(h.core.keys().identities()[0].destinations.size() == 1);
    // Given twice: refused.
    bytes twice = ext;
    twice.insert(twice.end(), ext.begin(), ext.end());
    CHECK(h.type_of(add_request(test_key(key_type::rsa), nullptr, "x", twice)) == failure);
    // A broken one: refused, never added unrestricted.
    bytes broken = dest_constraint_ext({constraint_bytes(origin, {"", "a", {}})});
    CHECK(h.type_of(add_request(test_key(key_type::rsa), nullptr, "x", broken)) == failure);
    CHECK(h.core.keys().size() == 1);
}

TEST_CASE("agent destination: userauth request parser")
{
    const bytes sid = sid_of(7);
    const auto& blob = user_key().public_part().blob();
    auto ok = parse_userauth_request(userauth(sid, "alice", blob), blob);
    REQUIRE(ok);
    CHECK(ok->user == "alice");
    CHECK(ok->session_id == sid);
    CHECK(!ok->host_key_blob);
    auto hb = parse_userauth_request(userauth(sid, "bob", blob, &host_a().public_part()), blob);
    REQUIRE(hb);
    CHECK(*hb->host_key_blob == host_a().public_part().blob());

    CHECK(!parse_userauth_request(userauth({}, "alice", blob), blob));
    CHECK(!parse_userauth_request(userauth(sid, "alice", blob, nullptr, "ssh-userauth"), blob));
    CHECK(!parse_userauth_request(userauth(sid, "alice", blob, nullptr, "ssh-connection", 0), blob));
    CHECK(!parse_userauth_request(userauth(sid, "alice", host_b().public_part().blob()), blob));
    CHECK(!parse_userauth_request(userauth(sid, std::string("al\0ce", 5), blob), blob));
    bytes trailing = userauth(sid, "alice", blob);
    trailing.push_back(0);
    CHECK(!parse_userauth_request(trailing, blob));
    const bytes good = userauth(sid, "alice", blob, &host_a().public_part());
    for (std::size_t n = 0; n < good.size(); ++n)
        CHECK(!parse_userauth_request(byte_span(good).first(n), blob));
    // Another method, an unknown algorithm, a type other than USERAUTH_REQUEST.
    bytes other;
    wire_writer(other).string(sid).u8(50).string("u").string("ssh-connection").string("password").u8(1).string(
        "ssh-ed25519").string(blob);
    CHECK(!parse_userauth_request(other, blob));
    bytes alg;
    wire_writer(alg).string(sid).u8(50).string("u").string("ssh-connection").string("publickey").u8(1).string(
        "nope").string(blob);
    CHECK(!parse_userauth_request(alg, blob));
    bytes type = userauth(sid, "u", blob);
    type[4 + sid.size()] = 51;
    CHECK(!parse_userauth_request(type, blob));
}

TEST_CASE("agent destination: hop matching")
{
    const std::uint64_t now = 2000000000;
    const auto a = binding(host_a(), 1, false);
    const auto b = binding(host_b(), 2, false);
    const dest_hop hop_a{"", "a", {{host_a().public_part(), false}}};
    CHECK(match_key_hop(a, hop_a, now));
    CHECK(!match_key_hop(b, hop_a, now));
    // A plain host key never matches a key marked as a CA.
    CHECK(!match_key_hop(a, dest_hop{"", "a", {{host_a().public_part(), true}}}, now));

    // A host certificate signed by the CA, for "*.example".
    fixed_random rng;
    certificate_fields f;
    f.kind = cert_kind::host;
    f.key_id = "host";
    f.principals = {"*.example"};
    f.valid_before = now + 100;
    auto cert = certificate::sign(f, host_b().public_part(), host_ca(), rng);
    REQUIRE(cert);
    session_binding cb{cert->blob(), host_b().public_part(), *cert, sid_of(3), false};
    const dest_hop ca_hop{"", "b.example", {{host_ca().public_part(), true}}};
    CHECK(match_key_hop(cb, ca_hop, now));
    CHECK(!match_key_hop(cb, dest_hop{"", "b.other", {{host_ca().public_part(), true}}}, now));
    CHECK(!match_key_hop(cb, dest_hop{"", "b.example", {{host_ca().public_part(), false}}}, now));
    CHECK(!match_key_hop(cb, ca_hop, now + 100)); // expired

    // Chains: origin > a, a > b; users checked only where given.
    auto cs = parsed({constraint_bytes(origin, to_host(host_a(), "a", "al*")),
                      constraint_bytes(to_host(host_a(), "a"), to_host(host_b(), "b"))});
    const std::string alice = "alice", bob = "bob";
    CHECK(permitted_by_dest_constraints(nullptr, &a, cs, &alice, now));
    CHECK(!permitted_by_dest_constraints(nullptr, &a, cs, &bob, now));
    CHECK(permitted_by_dest_constraints(nullptr, &a, cs, nullptr, now));
    CHECK(!permitted_by_dest_constraints(nullptr, &b, cs, nullptr, now));
    CHECK(permitted_by_dest_constraints(&a, &b, cs, &bob, now));
    CHECK(!permitted_by_dest_constraints(&b, &a, cs, nullptr, now));
    CHECK(permitted_by_dest_constraints(&a, nullptr, cs, nullptr, now));
    CHECK(!permitted_by_dest_constraints(&b, nullptr, cs, nullptr, now));

    // identity_permitted over the recorded bindings.
    connection_state conn;
    CHECK(!identity_permitted(cs, conn, &alice, now)); // local use
    conn.bind_attempted = true;
    CHECK(identity_permitted(cs, conn, nullptr, now)); // a failed bind
    conn.bindings = {binding(host_a(), 1, true), binding(host_b(), 2, false)};
    CHECK(!identity_permitted(cs, conn, &bob, now));
    conn.bindings = {binding(host_a(), 1, false), binding(host_b(), 2, false)};
    CHECK(identity_permitted(cs, conn, &bob, now)); // forwarded through an auth binding
    conn.bindings = {binding(host_a(), 1, true)};
    CHECK(identity_permitted(cs, conn, &alice, now)); // signing on a forwarding hop
    CHECK(!identity_permitted(cs, conn, nullptr, now));
    CHECK(!identity_permitted({}, conn, &alice, now)); // unconstrained
}

namespace {

// A harness holding user_key() restricted by `constraints`.
void add_restricted(harness& h, const std::vector<bytes>& constraints)
{
    REQUIRE(h.type_of(add_request(user_key(), nullptr, "restricted", dest_constraint_ext(constraints))) == success);
}

std::uint8_t sign(harness& h, const bytes& data)
{
    return h.type_of(sign_req(user_key().public_part().blob(), std::string_view(reinterpret_cast<const char*>(data.data()), data.size()), 0));
}

} // namespace

TEST_CASE("agent destination: signing on one hop")
{
    const auto& blob = user_key().public_part().blob();
    harness h;
    add_restricted(h, {constraint_bytes(origin, to_host(host_a(), "a", "alice"))});
    // Unbound: refused, even for a good request.
    CHECK(sign(h, userauth(sid_of(1), "alice", blob)) == failure);
    REQUIRE(h.type_of(bind_req(host_a(), sid_of(1), false)) == success);
    CHECK(sign(h, userauth(sid_of(1), "alice", blob)) == sign_response);
    CHECK(sign(h, userauth(sid_of(1), "alice", blob, &host_a().public_part())) == sign_response);
    // Another session id, user, host key in the request, or not a userauth request.
    CHECK(sign(h, userauth(sid_of(2), "alice", blob)) == failure);
    CHECK(sign(h, userauth(sid_of(1), "bob", blob)) == failure);
    CHECK(sign(h, userauth(sid_of(1), "alice", blob, &host_b().public_part())) == failure);
    CHECK(sign(h, bytes{1, 2, 3}) == failure);

    // Bound to a host the constraint does not list.
    harness other;
    add_restricted(other, {constraint_bytes(origin, to_host(host_a(), "a"))});
    REQUIRE(other.type_of(bind_req(host_b(), sid_of(1), false)) == success);
    CHECK(sign(other, userauth(sid_of(1), "alice", blob)) == failure);
    // An unconstrained key still signs anything there.
    REQUIRE(other.type_of(add_request(test_key(key_type::rsa), nullptr, "free")) == success);
    CHECK(other.type_of(sign_req(test_key(key_type::rsa).public_part().blob(), "x", 0)) == sign_response);
}

TEST_CASE("agent destination: a forwarded chain (two bindings)")
{
    const auto& blob = user_key().public_part().blob();
    const std::vector<bytes> chain{constraint_bytes(origin, to_host(host_a(), "a")),
                                   constraint_bytes(to_host(host_a(), "a"), to_host(host_b(), "b"))};
    harness h;
    add_restricted(h, chain);
    REQUIRE(h.type_of(bind_req(host_a(), sid_of(1), true)) == success);
    REQUIRE(h.type_of(bind_req(host_b(), sid_of(2), false)) == success);
    CHECK(sign(h, userauth(sid_of(2), "u", blob, &host_b().public_part())) == sign_response);
    // Forwarded connections must name the host key (hostbound method).
    CHECK(sign(h, userauth(sid_of(2), "u", blob)) == failure);
    // The first session's id is not the most recent.
    CHECK(sign(h, userauth(sid_of(1), "u", blob, &host_a().public_part())) == failure);

    // Without the a > b hop, the chain is refused.
    harness direct_only;
    add_restricted(direct_only, {chain[0]});
    REQUIRE(direct_only.type_of(bind_req(host_a(), sid_of(1), true)) == success);
    REQUIRE(direct_only.type_of(bind_req(host_b(), sid_of(2), false)) == success);
    CHECK(sign(direct_only, userauth(sid_of(2), "u", blob, &host_b().public_part())) == failure);
}

TEST_CASE("agent destination: identities listed only where usable")
{
    harness h;
    add_restricted(h, {constraint_bytes(origin, to_host(host_a(), "a"))});
    REQUIRE(h.type_of(add_request(test_key(key_type::rsa), nullptr, "free")) == success);
    CHECK(h.list().size() == 2); // unbound: local use (ssh-add -l)

    harness at_b;
    add_restricted(at_b, {constraint_bytes(origin, to_host(host_a(), "a"))});
    REQUIRE(at_b.type_of(bind_req(host_b(), sid_of(1), false)) == success);
    CHECK(at_b.list().empty());
    // Not visible: cannot be removed there either.
    CHECK(at_b.type_of(one_string(remove_identity, user_key().public_part().blob())) == failure);
    CHECK(at_b.core.keys().size() == 1);

    harness at_a;
    add_restricted(at_a, {constraint_bytes(origin, to_host(host_a(), "a"))});
    REQUIRE(at_a.type_of(bind_req(host_a(), sid_of(1), false)) == success);
    CHECK(at_a.list().size() == 1);

    // Forwarded to a: listed only when some hop leads on from a.
    harness fwd;
    add_restricted(fwd, {constraint_bytes(origin, to_host(host_a(), "a"))});
    REQUIRE(fwd.type_of(bind_req(host_a(), sid_of(1), true)) == success);
    CHECK(fwd.list().empty());
    harness fwd_on;
    add_restricted(fwd_on, {constraint_bytes(origin, to_host(host_a(), "a")),
                            constraint_bytes(to_host(host_a(), "a"), to_host(host_b(), "b"))});
    REQUIRE(fwd_on.type_of(bind_req(host_a(), sid_of(1), true)) == success);
    CHECK(fwd_on.list().size() == 1);

    // A failed session-bind hides constrained keys.
    harness failed;
    add_restricted(failed, {constraint_bytes(origin, to_host(host_a(), "a"))});
    bytes bad = bind_req(host_a(), sid_of(1), false);
    bad[bad.size() - 2] ^= 1;
    CHECK(failed.type_of(bad) == failure);
    CHECK(failed.list().empty());
}

TEST_CASE("agent destination: a host certificate matches a CA-marked hop")
{
    const auto& blob = user_key().public_part().blob();
    fixed_random rng;
    certificate_fields f;
    f.kind = cert_kind::host;
    f.key_id = "host";
    f.principals = {"b.example"};
    auto cert = certificate::sign(f, host_b().public_part(), host_ca(), rng);
    REQUIRE(cert);
    const bytes sid = sid_of(9);
    bytes bind;
    wire_writer(bind).u8(agent::extension).string(session_bind_extension).string(cert->blob()).string(sid).string(
        *host_b().sign("ssh-ed25519", sid)).u8(0);
    for (const char* host : {"b.example", "c.example"}) {
        harness h;
        add_restricted(h, {constraint_bytes(origin, {"", host, {{&host_ca().public_part(), true}}})});
        REQUIRE(h.type_of(bind) == success);
        const bool allowed = std::string_view(host) == "b.example"; // the certificate's principal
        CHECK(h.list().size() == (allowed ? 1u : 0u));
        CHECK(sign(h, userauth(sid, "u", blob)) == (allowed ? sign_response : failure));
    }
}
