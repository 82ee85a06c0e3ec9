// Fuzzes what ssh-keysign reads from ssh before it signs (common/auth/
// keysign_protocol): the input is the body of the helper's one message
// (version, descriptor, data), decoded, and its data checked as a
// hostbased request from "client.example" for user "al".
// Invariants: nothing crashes; a decoded message names a descriptor above
// 2 and came with version 2; a request that passes ends with the client
// host "client.example." (any case) and the user "al", names an algorithm
// the helper can sign with, and a key blob that parses as that algorithm's
// key (or certificate); a request that fails says why only when a field
// could not be read.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "common/auth/keysign_protocol.hpp"
#include "common/auth/messages.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/text_parse.hpp"
#include "common/transport/host_key_algorithms.hpp"
#include "common/wire.hpp"
#include "fuzz/fuzz_common.hpp"

#include <cstdlib>
#include <string>

using namespace longhaul;
using longhaul::fuzz::check;

namespace {

constexpr std::string_view host = "client.example";
constexpr std::string_view user = "al";

bytes request_body(int fd, const bytes& data)
{
    const bytes framed = encode_keysign_request(static_cast<std::uint32_t>(fd), data);
    return bytes(framed.begin() + 4, framed.end());
}

bytes hostbased(const bytes& blob, std::string alg, std::string chost, std::string luser)
{
    userauth_request req{"bob", "ssh-connection", "hostbased",
                         userauth_hostbased_data{std::move(alg), blob, std::move(chost), std::move(luser), {}}};
    return publickey_signed_data(bytes(32, 0x42), req);
}

void write_seeds(const std::string& dir)
{
    const auto& keys = fuzz::host_keys();
    int n = 0;
    const auto put = [&](const bytes& body) { fuzz::write_seed(dir, "seed-" + std::to_string(n++), body); };
    put(request_body(3, hostbased(keys.ed25519->public_part().blob(), "ssh-ed25519", "client.example.", "al")));
    put(request_body(3, hostbased(keys.ecdsa->public_part().blob(), "ecdsa-sha2-nistp256", "CLIENT.example.", "al")));
    put(request_body(5, hostbased(keys.rsa->public_part().blob(), "rsa-sha2-512", "client.example.", "al")));
    put(request_body(3, hostbased(keys.rsa->public_part().blob(), "ssh-ed25519", "client.example", "root")));
    put(request_body(1, bytes{1, 2, 3}));
    put(bytes{3, 0, 0, 0, 3});
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    fuzz::maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const byte_span in(data, size);
    std::string error;
    auto req = decode_keysign_request(in, error);
    if (!req) {
        check(!error.empty());
        return 0;
    }
    check(error.empty() && req->fd > 2 && size > 0 && data[0] == keysign_version);

    std::string why;
    auto ok = check_keysign_data(req->data, host, user, why);
    if (!ok)
        return 0;
    check(why.empty());
    // The tail: string "<host>." and string "al".
    const bytes& d = req->data;
    const std::size_t tail = 4 + host.size() + 1 + 4 + user.size();
    check(d.size() >= tail);
    wire_reader r(byte_span(d.data() + d.size() - tail, tail));
    const auto chost = r.text();
    const auto luser = r.text();
    check(r.ok() && r.remaining() == 0 && iequals(chost, std::string(host) + ".") && luser == user);
    // The key the helper will look for is the blob's (a certificate's
    // certified key), of the algorithm's type.
    const auto type = host_key_type_for_algorithm(ok->algorithm);
    check(type.has_value() && ok->key.type() == *type && ok->certificate == is_certificate_algorithm(ok->algorithm));
    if (ok->certificate) {
        auto c = certificate::from_blob(ok->key_blob);
        check(c.has_value() && c->key() == ok->key);
    } else {
        auto k = public_key::from_blob(ok->key_blob);
        check(k.has_value() && *k == ok->key);
    }
    return 0;
}
