#include "common/auth/sk_policy.hpp"

#include "common/keys/public_key.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

TEST_CASE("sk_policy: touch unless waived, PubkeyAuthOptions over the waiver")
{
    // Nothing said anywhere: the touch is required, verification is not.
    auto r = sk_requirements_for(false, false, false, false);
    CHECK(r.presence);
    CHECK_FALSE(r.verification);
    // no-touch-required on the line (or on both a cert-authority line and
    // its certificate) waives it...
    CHECK_FALSE(sk_requirements_for(false, false, true, false).presence);
    // ...unless PubkeyAuthOptions touch-required.
    CHECK(sk_requirements_for(true, false, true, false).presence);
    // verify-required from either side.
    CHECK(sk_requirements_for(false, true, false, false).verification);
    CHECK(sk_requirements_for(false, false, false, true).verification);
    // A default-constructed set still demands the touch.
    CHECK(sk_requirements{}.presence);
}

TEST_CASE("sk_policy: the unmet requirement, presence first")
{
    const sk_requirements touch{true, false}, both{true, true}, verify_only{false, true}, none{false, false};
    CHECK_FALSE(sk_unmet_requirement(touch, sk_flag_user_presence));
    CHECK(sk_unmet_requirement(touch, 0) == "user presence (authenticator touch)");
    CHECK(sk_unmet_requirement(touch, sk_flag_user_verification) == "user presence (authenticator touch)");
    CHECK(sk_unmet_requirement(both, 0) == "user presence (authenticator touch)");
    CHECK(sk_unmet_requirement(both, sk_flag_user_presence) == "user verification");
    CHECK_FALSE(sk_unmet_requirement(both, sk_flag_user_presence | sk_flag_user_verification));
    CHECK_FALSE(sk_unmet_requirement(verify_only, sk_flag_user_verification));
    CHECK(sk_unmet_requirement(verify_only, sk_flag_user_presence) == "user verification");
    CHECK_FALSE(sk_unmet_requirement(none, 0));
    // Other bits do not stand in for the two that count.
    CHECK(sk_unmet_requirement(both, 0xfa) == "user presence (authenticator touch)");
}

TEST_CASE("sk_policy: OpenSSH's refusal line, trailing space included")
{
    CHECK(sk_refusal_line("ED25519-SK SHA256:abc", true, "alice", "127.0.0.1", 4022,
                          "user presence (authenticator touch)") ==
          "public key ED25519-SK SHA256:abc signature for alice from 127.0.0.1 port 4022 rejected: user presence "
          "(authenticator touch) requirement not met ");
    CHECK(sk_refusal_line("ECDSA-SK-CERT SHA256:x", false, "bob", "::1", 1, "user verification") ==
          "public key ECDSA-SK-CERT SHA256:x signature for invalid user bob from ::1 port 1 rejected: user "
          "verification requirement not met ");
}
