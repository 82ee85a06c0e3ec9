// Fuzzes ssh-agent's request handler (ssh/agent/agent_core): the input is
// a stream of framed requests (uint32 length, then the body, as a client
// writes them) handed to one core, which starts holding an Ed25519 key so
// that signing, removal and confirmation are reachable. Nothing may crash
// or read out of bounds; every request gets a reply of a type a client
// knows (or the connection is closed), and the keystore stays bounded.
// A SIGN_REQUEST or REMOVE_IDENTITY whose key blob is one byte long names
// the held key (its blob is put in its place), so that the fuzzer reaches
// the paths past the key lookup without guessing a public key.
// Destination constraints (ssh-add -h) are reached the same way: the
// core also holds a second key restricted to origin > a fixed host key;
// - an ADD_ID_CONSTRAINED whose key field is one byte (uint32 1, then the
//   byte) becomes a real key, comment "fuzz", then the rest as its
//   constraints (the constraint parser sees fuzzer bytes);
// - a session-bind@openssh.com extension whose host key blob is one byte
//   binds the fixed host key over the next string (the session id),
//   signed here, then the forwarded flag;
// - a SIGN_REQUEST whose key blob is the byte 2 asks the restricted key to
//   sign a userauth request built from its data: string session id,
//   string user, byte method (odd: hostbound, naming the host key), so
//   that the checks past the parser (session id, user, hops) are reached.
//
// Security keys are added as sent (the hooks below stand in for the file
// system and the provider).
//
// Seeds: fuzz/corpus/agent_request_fuzz may hold captured ssh-add sessions
// (sk_*: Debian's ssh-add adding security keys, then signing with them).
#include "common/auth/agent_key_blob.hpp"
#include "common/auth/agent_protocol.hpp"
#include "common/log.hpp"
#include "common/wire.hpp"
#include "ssh/agent/agent_core.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace longhaul;
using namespace longhaul::agent;

namespace {

class counter_random final : public random_source {
public:
    void fill(mutable_byte_span out) override
    {
        for (auto& b : out)
            b = std::uint8_t(n_++);
    }

private:
    unsigned n_ = 0;
};

const private_key& held_key()
{
    static const private_key k = *private_key::generate(key_type::ed25519);
    return k;
}
const private_key& restricted_key()
{
    static const private_key k = *private_key::generate(key_type::ed25519);
    return k;
}
const private_key& host_key()
{
    static const private_key k = *private_key::generate(key_type::ed25519);
    return k;
}

// The restricted key's constraint: origin > "host" (the fixed host key),
// user "fuzz*".
bytes restricted_constraint()
{
    bytes from, to, one, all, ext;
    wire_writer(from).string("").string("").string("");
    wire_writer(to).string("fuzz*").string("host").string("").string(host_key().public_part().blob()).u8(0);
    wire_writer(one).string(from).string(to).string("");
    wire_writer(all).string(one);
    wire_writer(ext).u8(constrain_extension).string(restrict_destination_extension).string(all);
    return ext;
}

// A userauth request for the restricted key from the fuzzer's data.
bytes userauth_from(byte_span data)
{
    wire_reader r(data);
    const byte_span sid = r.string(256);
    const std::string_view user = r.text(256);
    const bool hostbound = (r.u8() & 1) != 0;
    bytes out;
    wire_writer w(out);
    w.string(sid).u8(50).string(user).string("ssh-connection");
    w.string(hostbound ? "publickey-hostbound-v00@openssh.com" : "publickey").u8(1).string("ssh-ed25519");
    w.string(restricted_key().public_part().blob());
    if (hostbound)
        w.string(host_key().public_part().blob());
    return out;
}

// The substitutions described at the top; other bodies pass unchanged.
bytes substitute(byte_span body)
{
    const bytes same(body.begin(), body.end());
    if (body.size() < 6 || load_u32(body.data() + 1) != 1)
        return same;
    const byte_span rest = body.subspan(6);
    bytes out;
    wire_writer w(out);
    switch (body[0]) {
    case sign_request:
    case remove_identity:
        if (body[0] == sign_request && body[5] == 2) {
            wire_reader r(rest);
            const byte_span data = r.string();
            const byte_span tail = r.rest();
            w.u8(sign_request).string(restricted_key().public_part().blob()).string(userauth_from(data)).raw(tail);
            return out;
        }
        w.u8(body[0]).string(held_key().public_part().blob()).raw(rest);
        return out;
    case add_id_constrained: {
        bytes key;
        wire_writer kw(key);
        if (!encode_private_key(kw, restricted_key(), nullptr))
            std::abort();
        w.u8(add_id_constrained).raw(key).string("fuzz").raw(rest);
        return out;
    }
    default: return same;
    }
}

// session-bind with a one-byte host key: the fixed host key binds the
// session id that follows, signed here.
bytes substitute_bind(byte_span body)
{
    wire_reader r(body);
    if (r.u8() != agent::extension || r.text(64) != session_bind_extension)
        return bytes(body.begin(), body.end());
    if (r.string().size() != 1)
        return bytes(body.begin(), body.end());
    const byte_span sid = r.string(256);
    const std::uint8_t forwarded = r.u8();
    if (!r.ok())
        return bytes(body.begin(), body.end());
    auto sig = host_key().sign("ssh-ed25519", sid);
    if (!sig)
        std::abort();
    bytes out;
    wire_writer(out).u8(agent::extension).string(session_bind_extension).string(host_key().public_part().blob())
        .string(sid).string(*sig).u8(forwarded);
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    counter_random random;
    logger log("agent-fuzz", log_level::quiet);
    bool allow = false;
    agent_core core({}, random, [&](const std::string&) { return allow = !allow; }, log);
    // Security keys: providers under /usr/lib resolve to themselves, and
    // the "provider" signs data of even length (a fixed blob) and refuses
    // the rest, so that both outcomes are reached.
    security_key_hooks hooks;
    hooks.canonical_path = [](const std::string& path, std::string& error) -> std::optional<std::string> {
        if (path.starts_with("/usr/lib/"))
            return path;
        error = "No such file or directory";
        return std::nullopt;
    };
    hooks.sign = [](const security_key_identity&, byte_span d, const std::string&) -> std::variant<bytes, std::string> {
        if (d.size() % 2 == 0)
            return bytes{0, 0, 0, 1, 'x'};
        return std::string("device not found");
    };
    core.set_security_key_hooks(std::move(hooks));
    connection_state conn;
    agent_clock::time_point now{};

    bytes add;
    wire_writer w(add);
    w.u8(add_id_constrained);
    if (!encode_private_key(w, held_key(), nullptr))
        std::abort();
    w.string("held").u8(constrain_confirm).u8(constrain_lifetime).u32(30);
    if (core.handle(add, conn, now).body != bytes{success})
        std::abort();
    bytes add_restricted;
    wire_writer rw(add_restricted);
    rw.u8(add_id_constrained);
    if (!encode_private_key(rw, restricted_key(), nullptr))
        std::abort();
    rw.string("restricted").raw(restricted_constraint());
    if (core.handle(add_restricted, conn, now).body != bytes{success})
        std::abort();

    wire_reader in(byte_span(data, size));
    while (in.remaining() >= 4) {
        const byte_span body = in.string(max_message);
        if (!in.ok())
            break;
        now += std::chrono::seconds(1);
        const bytes request = body.size() > 0 && body[0] == agent::extension ? substitute_bind(body) : substitute(body);
        agent_reply reply = core.handle(request, conn, now);
        if (reply.close)
            break;
        if (reply.body.empty())
            std::abort();
        switch (reply.body[0]) {
        case failure:
        case success:
        case identities_answer:
        case sign_response:
            break;
        default: std::abort();
        }
        if (core.keys().size() > keystore::max_keys || conn.bindings.size() > max_session_bindings)
            std::abort();
    }
    return 0;
}
