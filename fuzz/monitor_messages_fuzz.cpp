// Fuzzes what sshd's privileged monitor decodes from its sandboxed
// pre-authentication child (sshd/privsep/monitor_messages): a compromised
// child may send any datagram, and each is read by root.
//
// Input: one datagram. It is decoded as the request its type byte names
// (and, for coverage of the child's side, as every reply).
// Invariants: a decoded request re-encodes to the same bytes (decoders
// read exactly what encoders write, nothing left over), and no decoder
// accepts a datagram of another type.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "fuzz/fuzz_seeds.hpp"
#include "sshd/privsep/monitor_messages.hpp"

#include <cstdlib>
#include <string>

using namespace longhaul;
using namespace longhaul::privsep;
using longhaul::fuzz::write_seed;

namespace {

void check(bool ok)
{
    if (!ok)
        std::abort();
}

template <class T>
void round_trip(const result<T>& r, byte_span in)
{
    if (!r)
        return;
    const bytes again = encode(*r);
    check(again.size() == in.size() && std::equal(again.begin(), again.end(), in.begin()));
}

void decode_request(byte_span in)
{
    const auto type = message_type(in, false);
    if (!type) {
        check(!decode_sign_request(in) && !decode_lookup_user_request(in) && !decode_log_request(in));
        return;
    }
    switch (*type) {
    case monitor_type::sign: round_trip(decode_sign_request(in), in); break;
    case monitor_type::lookup_user: round_trip(decode_lookup_user_request(in), in); break;
    case monitor_type::key_allowed: round_trip(decode_key_allowed_request(in), in); break;
    case monitor_type::host_allowed: round_trip(decode_host_allowed_request(in), in); break;
    case monitor_type::moduli: round_trip(decode_moduli_request(in), in); break;
    case monitor_type::verify_pubkey: round_trip(decode_verify_pubkey_request(in), in); break;
    case monitor_type::password: round_trip(decode_password_request(in), in); break;
    case monitor_type::kbdint_start: round_trip(decode_kbdint_start_request(in), in); break;
    case monitor_type::kbdint_respond: round_trip(decode_kbdint_respond_request(in), in); break;
    case monitor_type::log: round_trip(decode_log_request(in), in); break;
    case monitor_type::authenticated: round_trip(decode_authenticated_request(in), in); break;
    case monitor_type::pty_release: round_trip(decode_pty_release_request(in), in); break;
    case monitor_type::kbdint_abort:
    case monitor_type::account_check:
    case monitor_type::max_tries:
    case monitor_type::pty:
        if (decode_empty(*type, in))
            check(in.size() == 1);
        break;
    }
}

void decode_replies(byte_span in)
{
    round_trip(decode_sign_reply(in), in);
    round_trip(decode_lookup_user_reply(in), in);
    round_trip(decode_key_allowed_reply(in), in);
    round_trip(decode_account_reply(in), in);
    round_trip(decode_pty_reply(in), in);
    round_trip(decode_moduli_reply(in), in);
    for (auto t : {monitor_type::kbdint_start, monitor_type::kbdint_respond})
        if (auto r = decode_kbdint_reply(t, in)) {
            const bytes again = encode_kbdint_reply(t, *r);
            check(again.size() == in.size() && std::equal(again.begin(), again.end(), in.begin()));
        }
    for (auto t : {monitor_type::verify_pubkey, monitor_type::password, monitor_type::authenticated, monitor_type::log,
                   monitor_type::host_allowed})
        if (auto r = decode_verdict(t, in)) {
            const bytes again = encode_verdict(t, *r);
            check(again.size() == in.size() && std::equal(again.begin(), again.end(), in.begin()));
        }
}

bytes text(std::string_view s) { return bytes(s.begin(), s.end()); }

void write_seeds(const std::string& dir)
{
    int n = 0;
    auto put = [&](const bytes& m) { write_seed(dir, "seed-" + std::to_string(n++), m); };
    put(encode(sign_request{text("\0\0\0\x0bssh-ed25519"), "ssh-ed25519", bytes(32, 0xab)}));
    put(encode(lookup_user_request{"alice"}));
    put(encode(key_allowed_request{text("blob"), true}));
    put(encode(host_allowed_request{text("blob"), "client.example.", "alice"}));
    put(encode(moduli_request{2048, 3072, 8192}));
    put(encode(moduli_reply{true, modp_group14()}));
    put(encode(verify_pubkey_request{text("blob"), "rsa-sha2-512", bytes(200, 1), bytes(271, 2)}));
    password_request p;
    p.password = secret_bytes(as_bytes("secret"));
    put(encode(p));
    put(encode(kbdint_start_request{"pam"}));
    kbdint_respond_request r;
    r.responses.emplace_back(as_bytes("123456"));
    put(encode(r));
    put(encode(log_request{log_level::verbose, "Accepted publickey for alice"}));
    put(encode(authenticated_request{bytes(300, 7)}));
    put(encode_empty(monitor_type::kbdint_abort));
    put(encode_empty(monitor_type::account_check));
    put(encode_empty(monitor_type::max_tries));
    put(encode_empty(monitor_type::pty));
    put(encode(pty_release_request{"/dev/pts/3"}));
    put(encode(pty_reply{true, "/dev/pts/3", "Last login: Fri Dec  4 23:14:45 2026 from 127.0.0.1\r\n"}));
    lookup_user_reply u;
    u.status = user_status::valid;
    u.settings = server_auth_settings{};
    u.settings->authentication_methods = {"publickey,password"};
    put(encode(u));
    kbdint_reply k;
    k.result = kbdint_reply::kind::prompts;
    k.prompts = {{"Password: ", false}};
    put(encode_kbdint_reply(monitor_type::kbdint_start, k));
    put(encode(sign_reply{true, bytes(83, 5)}));
    put(encode(account_reply{false, "expired"}));
    put(encode_verdict(monitor_type::password, true));
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    longhaul::fuzz::maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const byte_span in(data, size);
    decode_request(in);
    decode_replies(in);
    return 0;
}
