// Fuzzes ssh-agent's request handler (ssh/agent/agent_core): the input is
// a stream of framed requests (uint32 length, then the body, as a client
// writes them) handed to one core, which starts holding an Ed25519 key so
// that signing, removal and confirmation are reachable. Nothing may crash
// or read out of bounds; every request gets a reply of a type a client
// knows (or the connection is closed), and the keystore stays bounded.
// A SIGN_REQUEST or REMOVE_IDENTITY whose key blob is one byte long names
// the held key (its blob is put in its place), so that the fuzzer reaches
// the paths past the key lookup without guessing a public key.
//
// Seeds: fuzz/corpus/agent_request_fuzz may hold captured ssh-add sessions.
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

// The body with a one-byte key blob replaced by the held key's blob.
bytes substitute_key(byte_span body)
{
    if (body.size() < 6 || (body[0] != sign_request && body[0] != remove_identity) || load_u32(body.data() + 1) != 1)
        return bytes(body.begin(), body.end());
    bytes out;
    wire_writer(out).u8(body[0]).string(held_key().public_part().blob()).raw(body.subspan(6));
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    counter_random random;
    logger log("agent-fuzz", log_level::quiet);
    bool allow = false;
    agent_core core({}, random, [&](const std::string&) { return allow = !allow; }, log);
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

    wire_reader in(byte_span(data, size));
    while (in.remaining() >= 4) {
        const byte_span body = in.string(max_message);
        if (!in.ok())
            break;
        now += std::chrono::seconds(1);
        const bytes request = substitute_key(body);
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
