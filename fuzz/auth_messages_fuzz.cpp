// Fuzzes the user authentication message decoders: every payload is read
// as each message; whatever decodes must re-encode to the same bytes (or,
// for requests of unknown methods, to an encoding that decodes the same).
#include "common/auth/messages.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace longhaul;

namespace {

void check(bool ok)
{
    if (!ok)
        std::abort();
}

template <class M>
void round_trip(byte_span payload)
{
    auto m = M::decode(payload);
    if (!m)
        return;
    auto e = m->encode();
    const bytes again(e.data(), e.data() + e.size());
    // Booleans other than 0/1 are re-encoded as 1, so compare decodes.
    auto m2 = M::decode(again);
    check(m2.has_value());
    auto e2 = m2->encode();
    check(bytes(e2.data(), e2.data() + e2.size()) == again);
}

void fuzz_request(byte_span payload)
{
    auto m = userauth_request::decode(payload);
    if (!m)
        return;
    auto e = m->encode_secret();
    auto m2 = userauth_request::decode(e);
    check(m2.has_value());
    check(m2->user == m->user && m2->service == m->service && m2->method == m->method);
    check(m2->data.index() == m->data.index());
    check(to_bytes(m2->encode_secret().span()) == to_bytes(e.span()));
    if (const auto* pk = std::get_if<userauth_publickey_data>(&m->data)) {
        auto signed_data = publickey_signed_data(as_bytes("session"), *m);
        check(signed_data.size() >= 11);
        check(pk->has_signature || pk->signature.empty());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const byte_span payload(data, size);
    fuzz_request(payload);
    round_trip<service_request>(payload);
    round_trip<service_accept>(payload);
    round_trip<userauth_failure>(payload);
    round_trip<userauth_success>(payload);
    round_trip<userauth_banner>(payload);
    round_trip<userauth_pk_ok>(payload);
    round_trip<userauth_passwd_changereq>(payload);
    round_trip<userauth_info_request>(payload);
    round_trip<userauth_info_response>(payload);
    return 0;
}
