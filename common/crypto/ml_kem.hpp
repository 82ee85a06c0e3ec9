// ML-KEM-768 (FIPS 203, August 2024), the post-quantum half of the hybrid
// key exchanges. Written from the standard's algorithms over OpenSSL's SHA-3
// and SHAKE (OpenSSL 3.0 has no ML-KEM of its own).
//
// Keys and ciphertexts are the standard's byte strings: the encapsulation key
// ek, the expanded decapsulation key dk (dk_PKE || ek || H(ek) || z) and the
// ciphertext c. Peer bytes (ek on the encapsulating side, c on the
// decapsulating side) are checked as section 7 asks and refused with
// errc::invalid_argument; nothing here throws or aborts on them.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <array>
#include <cstddef>

namespace longhaul::ml_kem768 {

inline constexpr std::size_t encapsulation_key_bytes = 1184;
inline constexpr std::size_t decapsulation_key_bytes = 2400;
inline constexpr std::size_t ciphertext_bytes = 1088;
inline constexpr std::size_t shared_secret_bytes = 32;
inline constexpr std::size_t seed_bytes = 32;

struct key_pair {
    bytes encapsulation_key;        // 1184 bytes, public
    secret_bytes decapsulation_key; // 2400 bytes, wiped on destruction
};

struct encapsulation {
    bytes ciphertext;           // 1088 bytes
    secret_bytes shared_secret; // 32 bytes
};

// Algorithm 16 (ML-KEM.KeyGen_internal): deterministic in the seeds d and z,
// 32 bytes each. Other lengths are a caller's bug (the seeds never come from
// a peer): std::invalid_argument. std::runtime_error if OpenSSL cannot
// compute SHA-3.
key_pair key_gen_internal(byte_span d, byte_span z);

// Algorithm 17 (ML-KEM.Encaps_internal) with the message m (32 bytes), after
// the encapsulation key check of section 7.2: ek's length, and every
// coefficient below q (ByteEncode12(ByteDecode12(ek)) == ek). A failed check
// or a wrong length of m: errc::invalid_argument; an OpenSSL failure:
// errc::crypto_error.
result<encapsulation> encaps_internal(byte_span encapsulation_key, byte_span m);

// Algorithm 18 (ML-KEM.Decaps_internal) with implicit rejection: a ciphertext
// that does not re-encrypt to itself yields J(z || c), not an error. Neither
// the comparison nor the choice of the key branches on secret data. The input
// check of section 7.3 (the lengths of dk and c, and H(ek) stored in dk
// matching the ek stored beside it) refuses with errc::invalid_argument.
result<secret_bytes> decaps(const secret_bytes& decapsulation_key, byte_span ciphertext);

// The randomised forms (Algorithms 19 and 20): the seeds come from OpenSSL's
// RAND_priv_bytes; errc::crypto_error when it fails.
result<key_pair> key_gen();
result<encapsulation> encaps(byte_span encapsulation_key);

} // namespace longhaul::ml_kem768
