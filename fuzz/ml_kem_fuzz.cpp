// Fuzzes ML-KEM-768 (common/crypto/ml_kem) where it meets peer bytes: the
// encapsulation key check and encapsulation under an arbitrary "ek", and
// decapsulation of an arbitrary ciphertext (or under an arbitrary dk) with a
// fixed key pair. The first byte chooses the mode, the rest is the input:
//   0  ek: accepted exactly when it is 1184 bytes with every 12-bit field of
//      t-hat below q (checked here independently); what it gives decapsulates
//   1  ciphertext under the fixed dk: accepted exactly when 1088 bytes; the
//      fixed ciphertext gives the fixed secret, any other J(z || c)
//   2  dk with the fixed ciphertext: accepted exactly when 2400 bytes with
//      H(ek) matching the ek stored in it
//   3  d, z, m (zero-padded to 96 bytes), then a bit index: a key pair from
//      those seeds round-trips, and the ciphertext with that bit flipped is
//      rejected implicitly
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "common/crypto/ml_kem.hpp"
#include "fuzz/fuzz_seeds.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace longhaul;
namespace mk = longhaul::ml_kem768;
using longhaul::fuzz::check;
using longhaul::fuzz::with_prefix;
using longhaul::fuzz::write_seed;

namespace {

struct fixture {
    mk::key_pair keys = mk::key_gen_internal(bytes(32, 0x11), bytes(32, 0x22));
    mk::encapsulation enc = *mk::encaps_internal(keys.encapsulation_key, bytes(32, 0x33));
};

const fixture& fixed()
{
    static const fixture f;
    return f;
}

// OpenSSL directly, not the library's hashing: an independent reference.
bytes hash(const EVP_MD* md, std::size_t out_len, byte_span a, byte_span b = {})
{
    bytes out(out_len);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    check(ctx != nullptr && EVP_DigestInit_ex(ctx, md, nullptr) == 1 &&
          EVP_DigestUpdate(ctx, a.data(), a.size()) == 1 && EVP_DigestUpdate(ctx, b.data(), b.size()) == 1);
    if (EVP_MD_get_flags(md) & EVP_MD_FLAG_XOF)
        check(EVP_DigestFinalXOF(ctx, out.data(), out.size()) == 1);
    else
        check(EVP_DigestFinal_ex(ctx, out.data(), nullptr) == 1);
    EVP_MD_CTX_free(ctx);
    return out;
}

// J(z || c) for the implicit rejection; z is the last 32 bytes of dk.
bytes rejection_key(byte_span dk, byte_span c) { return hash(EVP_shake256(), 32, dk.last(32), c); }

bool same(byte_span a, byte_span b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

// Section 7.2's modulus check written the plain way: every 12-bit field of
// the 1152 bytes of t-hat below 3329.
bool fields_in_range(byte_span ek)
{
    for (std::size_t i = 0; i + 3 <= 1152; i += 3) {
        const unsigned lo = ek[i] | ((ek[i + 1] & 0x0fu) << 8);
        const unsigned hi = (ek[i + 1] >> 4) | (unsigned{ek[i + 2]} << 4);
        if (lo >= 3329 || hi >= 3329)
            return false;
    }
    return true;
}

void encapsulate(byte_span ek)
{
    const auto& f = fixed();
    const auto r = mk::encaps_internal(ek, bytes(32, 0x33));
    const bool valid = ek.size() == mk::encapsulation_key_bytes && fields_in_range(ek);
    check(r.has_value() == valid);
    if (!r) {
        check(r.error() == errc::invalid_argument);
        return;
    }
    check(r->ciphertext.size() == mk::ciphertext_bytes && r->shared_secret.size() == mk::shared_secret_bytes);
    const bool same_key = same(ek, f.keys.encapsulation_key);
    check(same(r->ciphertext, f.enc.ciphertext) == same_key);
    // Under the fixed dk the ciphertext decapsulates: to the same secret when
    // the ek is the fixed one, else (implicit rejection) to J(z || c).
    const auto k = mk::decaps(f.keys.decapsulation_key, r->ciphertext);
    check(k.has_value() && k->size() == mk::shared_secret_bytes);
    check(same(*k, same_key ? to_bytes(r->shared_secret)
                            : rejection_key(f.keys.decapsulation_key, r->ciphertext)));
}

void decapsulate(byte_span c)
{
    const auto& f = fixed();
    const auto k = mk::decaps(f.keys.decapsulation_key, c);
    check(k.has_value() == (c.size() == mk::ciphertext_bytes));
    if (!k) {
        check(k.error() == errc::invalid_argument);
        return;
    }
    if (same(c, f.enc.ciphertext))
        check(same(*k, f.enc.shared_secret));
    else
        check(same(*k, rejection_key(f.keys.decapsulation_key, c)));
}

void decapsulate_with(byte_span dk)
{
    const auto& f = fixed();
    const auto k = mk::decaps(secret_bytes(dk), f.enc.ciphertext);
    const bool valid = dk.size() == mk::decapsulation_key_bytes &&
                       same(hash(EVP_sha3_256(), 32, dk.subspan(1152, 1184)), dk.subspan(2336, 32));
    check(k.has_value() == valid);
    if (!k) {
        check(k.error() == errc::invalid_argument);
        return;
    }
    check(k->size() == mk::shared_secret_bytes);
    if (same(dk, f.keys.decapsulation_key))
        check(same(*k, f.enc.shared_secret));
}

void round_trip(byte_span in)
{
    bytes seeds(96, 0);
    std::copy_n(in.begin(), std::min<std::size_t>(in.size(), 96), seeds.begin());
    const byte_span s(seeds);
    const auto keys = mk::key_gen_internal(s.first(32), s.subspan(32, 32));
    const auto enc = mk::encaps_internal(keys.encapsulation_key, s.subspan(64, 32));
    check(enc.has_value());
    const auto k = mk::decaps(keys.decapsulation_key, enc->ciphertext);
    check(k.has_value() && same(*k, enc->shared_secret));

    std::size_t bit = 0;
    for (std::size_t i = 96; i < in.size() && i < 98; ++i)
        bit = bit << 8 | in[i];
    bytes c = enc->ciphertext;
    bit %= c.size() * 8;
    c[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    const auto rejected = mk::decaps(keys.decapsulation_key, c);
    check(rejected.has_value() && !same(*rejected, enc->shared_secret) &&
          same(*rejected, rejection_key(keys.decapsulation_key, c)));
}

void write_seeds(const std::string& dir)
{
    const auto& f = fixed();
    write_seed(dir, "ek", with_prefix({0}, f.keys.encapsulation_key));
    bytes ek = f.keys.encapsulation_key;
    ek[0] = 0x01; // first field = 0xd01 = q
    ek[1] = static_cast<std::uint8_t>((ek[1] & 0xf0) | 0x0d);
    write_seed(dir, "ek-field-q", with_prefix({0}, ek));
    ek = f.keys.encapsulation_key;
    ek[1151] = 0xff; // last field >= 0xff0
    write_seed(dir, "ek-last-field", with_prefix({0}, ek));
    ek = mk::key_gen_internal(bytes(32, 0x44), bytes(32, 0x55)).encapsulation_key;
    write_seed(dir, "ek-other", with_prefix({0}, ek));
    write_seed(dir, "ct", with_prefix({1}, f.enc.ciphertext));
    bytes c = f.enc.ciphertext;
    c.back() ^= 0x01;
    write_seed(dir, "ct-last-byte", with_prefix({1}, c));
    write_seed(dir, "dk", with_prefix({2}, f.keys.decapsulation_key));
    bytes seeds(98);
    for (std::size_t i = 0; i < seeds.size(); ++i)
        seeds[i] = static_cast<std::uint8_t>(i * 37 + 5);
    write_seed(dir, "round-trip", with_prefix({3}, seeds));
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    longhaul::fuzz::maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    const byte_span in(data + 1, size - 1);
    switch (data[0] % 4) {
    case 0: encapsulate(in); break;
    case 1: decapsulate(in); break;
    case 2: decapsulate_with(in); break;
    default: round_trip(in); break;
    }
    return 0;
}
