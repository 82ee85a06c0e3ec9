// Fuzzes public key blobs, signature verification, the text line formats
// (.pub, authorized_keys, known_hosts, options, hashed hosts) and SSHSIG.
//
// The first input byte picks a mode, the rest is the input:
//   0  a key blob: uint16 length, the blob, then a signature blob verified
//      with each algorithm of the key's type
//   1  a text line, read as .pub, authorized_keys and known_hosts line,
//      options field and hashed host name
//   2  an SSHSIG blob, verified over a fixed message
//   3  base64 text and armor
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR writes mode 0 seeds (a key of each
// type with a signature by every algorithm of its type over "data");
// fuzz/make_corpora.sh adds the .pub lines, known_hosts and authorized_keys
// lines, and the SSHSIG files of tests/data/keys.
#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/sshsig.hpp"
#include "common/wire.hpp"
#include "common/keys/private_key.hpp"
#include "fuzz/fuzz_seeds.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace longhaul;

namespace {

void check(bool ok)
{
    if (!ok)
        std::abort();
}

void fuzz_blob(byte_span in)
{
    if (in.size() < 2)
        return;
    const std::size_t n = std::min<std::size_t>(in.size() - 2, std::size_t(in[0]) << 8 | in[1]);
    const byte_span blob = in.subspan(2, n), sig = in.subspan(2 + n);
    auto key = public_key::from_blob(blob);
    if (!key)
        return;
    // The canonical blob parses to the same key, and is stable.
    auto again = public_key::from_blob(key->blob());
    check(again.has_value() && again->blob() == key->blob());
    check(key->fingerprint_sha256().size() == 50);
    check(key->bits() > 0);
    for (auto alg : signature_algorithms_for(key->type()))
        (void)key->verify(alg, as_bytes("data"), sig);
}

void fuzz_line(std::string_view line)
{
    if (auto k = parse_public_key_line(line)) {
        auto again = parse_public_key_line(format_public_key_line(k->key, k->comment));
        check(again.has_value() && again->key == k->key);
    }
    if (auto k = parse_authorized_keys_line(line)) {
        // The options field, when present, is what precedes the key.
        check(k->options.empty() || line.find(k->options) != std::string_view::npos);
        (void)parse_key_options(k->options);
    }
    if (auto k = parse_known_hosts_line(line)) {
        auto again = parse_known_hosts_line(format_known_hosts_line(*k));
        check(again.has_value() && again->key == k->key && again->hosts == k->hosts && again->marker == k->marker);
    }
    (void)parse_key_options(line);
    if (auto h = parse_hashed_host(line)) {
        auto rebuilt = hash_known_host("example.com", h->salt);
        check(rebuilt.has_value() && hashed_host_matches(*rebuilt, "example.com"));
    }
}

void fuzz_sshsig(byte_span in)
{
    auto sig = parse_sshsig_blob(in);
    if (!sig)
        return;
    // Re-encoding gives an envelope with the same fields (the key blob in
    // canonical form).
    auto again = parse_sshsig_blob(sshsig_to_blob(*sig));
    check(again.has_value() && again->key == sig->key && again->ns == sig->ns && again->signature == sig->signature);
    (void)verify_sshsig(*sig, sig->ns, as_bytes("Longhaul SSH test message\n"));
}

void fuzz_base64(std::string_view text)
{
    auto d = base64_decode(text);
    if (d)
        check(base64_encode(*d) == text);
    auto s = base64_decode_secret(text);
    check(s.has_value() == d.has_value());
    if (auto a = armor_decode(text, "SSH SIGNATURE")) {
        auto again = armor_decode(armor_encode("SSH SIGNATURE", a->span()), "SSH SIGNATURE");
        check(again.has_value() && to_bytes(again->span()) == to_bytes(a->span()));
    }
}

void write_seeds(const std::string& dir)
{
    int n = 0;
    for (auto [t, bits] : {std::pair{key_type::ed25519, 0}, {key_type::ecdsa_p256, 256}, {key_type::ecdsa_p384, 384},
                           {key_type::ecdsa_p521, 521}, {key_type::rsa, 2048}}) {
        auto k = private_key::generate(t, bits);
        check(k.has_value());
        const bytes blob = k->public_part().blob();
        for (auto alg : signature_algorithms_for(t)) {
            auto sig = k->sign(alg, as_bytes("data"));
            check(sig.has_value());
            bytes seed{0, static_cast<std::uint8_t>(blob.size() >> 8), static_cast<std::uint8_t>(blob.size())};
            seed.insert(seed.end(), blob.begin(), blob.end());
            seed.insert(seed.end(), sig->begin(), sig->end());
            fuzz::write_seed(dir, "seed-" + std::to_string(n++), seed);
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    fuzz::maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    const byte_span rest(data + 1, size - 1);
    switch (data[0] & 3) {
    case 0: fuzz_blob(rest); break;
    case 1: fuzz_line(as_string_view(rest)); break;
    case 2: fuzz_sshsig(rest); break;
    case 3: fuzz_base64(as_string_view(rest)); break;
    }
    return 0;
}
