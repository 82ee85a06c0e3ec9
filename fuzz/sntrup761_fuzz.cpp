// Fuzzes sntrup761 (common/crypto/sntrup761) where it meets peer bytes:
// encapsulation under an arbitrary public key, decapsulation of an arbitrary
// ciphertext (or under an arbitrary secret key) with a fixed key pair, and
// round trips from fuzzer-chosen randomness. The first byte chooses the
// mode, the rest is the input:
//   0  pk: accepted exactly when 1158 bytes (Decode is total, so any content);
//      with the fixed randomness the fixed pk gives the fixed ciphertext, and
//      what any pk gives decapsulates under the fixed sk to the fixed
//      secret's counterpart or (implicit rejection) HashSession(0, rho, c)
//   1  ciphertext under the fixed sk: accepted exactly when 1039 bytes; the
//      fixed ciphertext gives the fixed secret, any other HashSession(0, rho, c)
//   2  sk with the fixed ciphertext: accepted exactly when 1763 bytes (any
//      content, even coefficient encodings no key generation writes)
//   3  a bit index (2 bytes), then the random bytes key generation and
//      encapsulation draw (continued by a generator seeded from them once
//      the input runs out): the pair round-trips, and the ciphertext with
//      that bit flipped is rejected implicitly
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "common/crypto/sntrup761.hpp"
#include "fuzz/fuzz_seeds.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

using namespace longhaul;
namespace st = longhaul::sntrup761;
using longhaul::fuzz::check;
using longhaul::fuzz::with_prefix;
using longhaul::fuzz::write_seed;

namespace {

// Random bytes: the given ones first, then splitmix64 seeded from them, so a
// stuck or short input never makes key generation draw the same g forever.
class byte_stream {
public:
    explicit byte_stream(byte_span prefix) : prefix_(prefix)
    {
        for (const auto b : prefix)
            state_ = (state_ ^ b) * 0x100000001b3ull;
    }

    bool operator()(mutable_byte_span out)
    {
        for (auto& b : out) {
            if (used_ < prefix_.size()) {
                b = prefix_[used_++];
                continue;
            }
            state_ += 0x9e3779b97f4a7c15ull;
            std::uint64_t z = state_;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            b = static_cast<std::uint8_t>(z ^ (z >> 31));
        }
        return true;
    }

private:
    byte_span prefix_;
    std::size_t used_ = 0;
    std::uint64_t state_ = 0xcbf29ce484222325ull;
};

st::random_fn stream_from(std::uint8_t fill)
{
    auto stream = std::make_shared<byte_stream>(byte_span{});
    // Distinct fixed streams: skip a fill-dependent number of bytes.
    bytes skip(fill);
    (*stream)(skip);
    return [stream](mutable_byte_span out) { return (*stream)(out); };
}

struct fixture {
    st::key_pair keys = *st::key_gen(stream_from(0x11));
    st::encapsulation enc = *st::encaps(keys.public_key, stream_from(0x33));
};

const fixture& fixed()
{
    static const fixture f;
    return f;
}

// OpenSSL directly, not the library's hasher: an independent reference.
// Hash_prefix(b, x || y) = the first 32 bytes of SHA-512(b || x || y).
bytes hash_prefix(std::uint8_t b, byte_span x, byte_span y = {})
{
    bytes out(64);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    check(ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha512(), nullptr) == 1 &&
          EVP_DigestUpdate(ctx, &b, 1) == 1 && EVP_DigestUpdate(ctx, x.data(), x.size()) == 1 &&
          EVP_DigestUpdate(ctx, y.data(), y.size()) == 1 && EVP_DigestFinal_ex(ctx, out.data(), nullptr) == 1);
    EVP_MD_CTX_free(ctx);
    out.resize(32);
    return out;
}

// HashSession(0, rho, c); rho is bytes 1540..1730 of sk.
bytes rejection_key(byte_span sk, byte_span c) { return hash_prefix(0, hash_prefix(3, sk.subspan(1540, 191)), c); }

bool same(byte_span a, byte_span b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

void encapsulate(byte_span pk)
{
    const auto& f = fixed();
    const auto r = st::encaps(pk, stream_from(0x33));
    check(r.has_value() == (pk.size() == st::public_key_bytes));
    if (!r) {
        check(r.error() == errc::invalid_argument);
        return;
    }
    check(r->ciphertext.size() == st::ciphertext_bytes && r->shared_secret.size() == st::shared_secret_bytes);
    const bool same_key = same(pk, f.keys.public_key);
    // The confirmation hash covers Hash_prefix(4, pk): another pk (even one
    // decoding to the same h) gives another ciphertext.
    check(same(r->ciphertext, f.enc.ciphertext) == same_key);
    const auto k = st::decaps(f.keys.secret_key, r->ciphertext);
    check(k.has_value() && k->size() == st::shared_secret_bytes);
    check(same(*k, same_key ? to_bytes(r->shared_secret) : rejection_key(f.keys.secret_key, r->ciphertext)));
}

void decapsulate(byte_span c)
{
    const auto& f = fixed();
    const auto k = st::decaps(f.keys.secret_key, c);
    check(k.has_value() == (c.size() == st::ciphertext_bytes));
    if (!k) {
        check(k.error() == errc::invalid_argument);
        return;
    }
    check(k->size() == st::shared_secret_bytes);
    if (same(c, f.enc.ciphertext))
        check(same(*k, f.enc.shared_secret));
    else
        check(same(*k, rejection_key(f.keys.secret_key, c)));
}

void decapsulate_with(byte_span sk)
{
    const auto& f = fixed();
    const auto k = st::decaps(secret_bytes(sk), f.enc.ciphertext);
    check(k.has_value() == (sk.size() == st::secret_key_bytes));
    if (!k) {
        check(k.error() == errc::invalid_argument);
        return;
    }
    check(k->size() == st::shared_secret_bytes);
    if (same(sk, f.keys.secret_key))
        check(same(*k, f.enc.shared_secret));
}

void round_trip(byte_span in)
{
    std::size_t bit = 0;
    for (std::size_t i = 0; i < in.size() && i < 2; ++i)
        bit = bit << 8 | in[i];
    const auto stream = std::make_shared<byte_stream>(in.subspan(std::min<std::size_t>(in.size(), 2)));
    const st::random_fn random = [stream](mutable_byte_span out) { return (*stream)(out); };
    const auto keys = st::key_gen(random);
    check(keys.has_value());
    check(keys->public_key.size() == st::public_key_bytes && keys->secret_key.size() == st::secret_key_bytes);
    check(same(keys->secret_key.span().subspan(382, 1158), keys->public_key));
    check(same(keys->secret_key.span().last(32), hash_prefix(4, keys->public_key)));
    const auto enc = st::encaps(keys->public_key, random);
    check(enc.has_value());
    const auto k = st::decaps(keys->secret_key, enc->ciphertext);
    check(k.has_value() && same(*k, enc->shared_secret));

    bytes c = enc->ciphertext;
    bit %= c.size() * 8;
    c[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    const auto rejected = st::decaps(keys->secret_key, c);
    check(rejected.has_value() && !same(*rejected, enc->shared_secret) &&
          same(*rejected, rejection_key(keys->secret_key, c)));
}

void write_seeds(const std::string& dir)
{
    const auto& f = fixed();
    write_seed(dir, "pk", with_prefix({0}, f.keys.public_key));
    write_seed(dir, "pk-ff", with_prefix({0}, bytes(st::public_key_bytes, 0xff)));
    const auto other = *st::key_gen(stream_from(0x44));
    write_seed(dir, "pk-other", with_prefix({0}, other.public_key));
    write_seed(dir, "ct", with_prefix({1}, f.enc.ciphertext));
    bytes c = f.enc.ciphertext;
    c.back() ^= 0x01;
    write_seed(dir, "ct-last-byte", with_prefix({1}, c));
    c = f.enc.ciphertext;
    c[0] ^= 0x01;
    write_seed(dir, "ct-first-byte", with_prefix({1}, c));
    write_seed(dir, "sk", with_prefix({2}, f.keys.secret_key));
    write_seed(dir, "sk-ff", with_prefix({2}, bytes(st::secret_key_bytes, 0xff)));
    bytes seeds(64);
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
