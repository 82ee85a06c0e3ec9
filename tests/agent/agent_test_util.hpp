// Helpers for the agent's unit tests: keys made once, request builders.
#pragma once

#include "common/auth/agent_key_blob.hpp"
#include "common/auth/agent_protocol.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/private_key.hpp"
#include "common/log.hpp"
#include "common/random.hpp"
#include "common/wire.hpp"
#include "ssh/agent/agent_core.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

namespace agent_test {

using namespace longhaul;
using namespace longhaul::agent;

class fixed_random final : public random_source {
public:
    void fill(mutable_byte_span out) override
    {
        for (auto& b : out)
            b = std::uint8_t(counter_++);
    }

private:
    unsigned counter_ = 0;
};

inline const private_key& test_key(key_type t)
{
    static const private_key ed = *private_key::generate(key_type::ed25519);
    static const private_key ec = *private_key::generate(key_type::ecdsa_p256);
    static const private_key rsa = *private_key::generate(key_type::rsa, 1024);
    switch (t) {
    case key_type::ed25519: return ed;
    case key_type::rsa: return rsa;
    default: return ec;
    }
}

inline const certificate& test_cert()
{
    static const certificate c = [] {
        fixed_random rng;
        certificate_fields f;
        f.key_id = "test";
        f.principals = {"user"};
        f.extensions = default_user_extensions();
        auto ca = *private_key::generate(key_type::ed25519);
        return *certificate::sign(f, test_key(key_type::ecdsa_p256).public_part(), ca, rng);
    }();
    return c;
}

inline bytes add_request(const private_key& k, const certificate* cert, std::string_view comment, bytes constraints = {})
{
    bytes b;
    wire_writer w(b);
    w.u8(constraints.empty() ? add_identity : add_id_constrained);
    REQUIRE(encode_private_key(w, k, cert));
    w.string(comment);
    w.raw(constraints);
    return b;
}

inline bytes sign_req(byte_span blob, std::string_view data, std::uint32_t flags)
{
    bytes b;
    wire_writer(b).u8(sign_request).string(blob).string(data).u32(flags);
    return b;
}

inline bytes one_string(std::uint8_t type, byte_span s)
{
    bytes b;
    wire_writer(b).u8(type).string(s);
    return b;
}

// A core with a test clock and a scripted confirmation.
struct harness {
    explicit harness(agent_settings s = {}) : settings(s) {}
    fixed_random random;
    logger log{"agent-test", log_level::quiet};
    int confirms = 0;
    bool allow = true;
    std::string last_prompt;
    agent_settings settings;
    agent_core core{settings, random,
                    [this](const std::string& p) {
                        ++confirms;
                        last_prompt = p;
                        return allow;
                    },
                    log};
    connection_state conn;
    agent_clock::time_point now{std::chrono::seconds(1000)};

    agent_reply call(byte_span body) { return core.handle(body, conn, now); }
    std::uint8_t type_of(byte_span body)
    {
        auto r = call(body);
        REQUIRE(!r.close);
        REQUIRE(!r.body.empty());
        return r.body[0];
    }
    std::vector<identity> list()
    {
        bytes req{request_identities};
        auto r = call(req);
        auto ids = decode_identities_answer(r.body);
        REQUIRE(ids);
        return *ids;
    }
};

} // namespace agent_test
