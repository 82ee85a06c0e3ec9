// mlkem768x25519-sha256: ML-KEM-768 (FIPS 203) and X25519 side by side,
// as draft-ietf-sshm-mlkem-hybrid-kex and OpenSSH 9.9+ define it.
//
//   C_INIT  = ek (1184) || X25519 public (32)            client -> server
//   S_REPLY = ciphertext (1088) || X25519 public (32)     server -> client
//   K       = SHA-256(K_PQ || K_CL)
//
// A KEM is not symmetric as Diffie-Hellman is: the server's public value is
// the ciphertext it makes for the client's key, so it exists only once the
// client's value has been seen. key_exchange asks for the server's value
// after derive(), which is when the responder has one.
#include "common/crypto/hash.hpp"
#include "common/crypto/key_agreement.hpp"
#include "common/crypto/ml_kem.hpp"

#include <optional>
#include <stdexcept>

namespace longhaul {

namespace {

constexpr std::size_t x25519_bytes = 32;

// K = SHA-256(K_PQ || K_CL), both halves wiped with the caller's copies.
secret_bytes combine(const secret_bytes& pq, const secret_bytes& classical)
{
    secret_bytes k(digest_size(hash_alg::sha256));
    hasher h(hash_alg::sha256);
    h.update(pq.span()).update(classical.span()).finish_into(k.span());
    return k;
}

class mlkem768x25519_initiator final : public key_agreement {
public:
    mlkem768x25519_initiator(ml_kem768::key_pair kem, std::unique_ptr<key_agreement> x25519)
        : kem_(std::move(kem)), x25519_(std::move(x25519))
    {
        public_ = kem_.encapsulation_key;
        const auto x = x25519_->public_value();
        public_.insert(public_.end(), x.begin(), x.end());
    }

    byte_span public_value() const noexcept override { return public_; }

    // (May run more than once, on the same key: the tests compare the
    // secrets of a changed and a true reply. key_exchange drops the
    // agreement after its one reply.)
    result<secret_bytes> derive(byte_span reply) override
    {
        if (reply.size() != ml_kem768::ciphertext_bytes + x25519_bytes)
            return errc::invalid_argument;
        auto pq = ml_kem768::decaps(kem_.decapsulation_key, reply.first(ml_kem768::ciphertext_bytes));
        if (!pq)
            return pq.error();
        auto classical = x25519_->derive(reply.subspan(ml_kem768::ciphertext_bytes));
        if (!classical)
            return classical.error();
        return combine(*pq, *classical);
    }

private:
    ml_kem768::key_pair kem_;
    std::unique_ptr<key_agreement> x25519_;
    bytes public_;
};

class mlkem768x25519_responder final : public key_agreement {
public:
    // `m`: a fixed encapsulation message, for known-answer tests only.
    mlkem768x25519_responder(std::unique_ptr<key_agreement> x25519, std::optional<secret_bytes> m)
        : x25519_(std::move(x25519)), m_(std::move(m))
    {
    }

    // Empty until derive() has made the ciphertext.
    byte_span public_value() const noexcept override { return public_; }

    result<secret_bytes> derive(byte_span init) override
    {
        if (init.size() != ml_kem768::encapsulation_key_bytes + x25519_bytes || !public_.empty())
            return errc::invalid_argument;
        const auto ek = init.first(ml_kem768::encapsulation_key_bytes);
        auto kem = m_ ? ml_kem768::encaps_internal(ek, m_->span()) : ml_kem768::encaps(ek);
        if (!kem)
            return kem.error();
        auto classical = x25519_->derive(init.subspan(ml_kem768::encapsulation_key_bytes));
        if (!classical)
            return classical.error();
        public_ = std::move(kem->ciphertext);
        const auto x = x25519_->public_value();
        public_.insert(public_.end(), x.begin(), x.end());
        return combine(kem->shared_secret, *classical);
    }

private:
    std::unique_ptr<key_agreement> x25519_;
    std::optional<secret_bytes> m_;
    bytes public_;
};

result<std::unique_ptr<key_agreement>> make_initiator(result<ml_kem768::key_pair> kem,
                                                 result<std::unique_ptr<key_agreement>> x25519)
{
    if (!kem)
        return kem.error();
    if (!x25519)
        return x25519.error();
    return std::unique_ptr<key_agreement>(new mlkem768x25519_initiator(std::move(*kem), std::move(*x25519)));
}

result<std::unique_ptr<key_agreement>> make_responder(result<std::unique_ptr<key_agreement>> x25519,
                                                 std::optional<secret_bytes> m)
{
    if (!x25519)
        return x25519.error();
    return std::unique_ptr<key_agreement>(new mlkem768x25519_responder(std::move(*x25519), std::move(m)));
}

} // namespace

result<std::unique_ptr<key_agreement>> make_mlkem768x25519_agreement(bool responder_side)
{
    if (responder_side)
        return make_responder(make_x25519_agreement(), std::nullopt);
    return make_initiator(ml_kem768::key_gen(), make_x25519_agreement());
}

result<std::unique_ptr<key_agreement>> make_mlkem768x25519_initiator_from(byte_span d, byte_span z,
                                                                         byte_span x25519_private)
{
    if (d.size() != ml_kem768::seed_bytes || z.size() != ml_kem768::seed_bytes)
        return errc::invalid_argument;
    try {
        return make_initiator(ml_kem768::key_gen_internal(d, z), make_x25519_agreement_from_private(x25519_private));
    } catch (const std::runtime_error&) { // OpenSSL's SHA-3 failed
        return errc::crypto_error;
    }
}

result<std::unique_ptr<key_agreement>> make_mlkem768x25519_responder_from(byte_span m, byte_span x25519_private)
{
    if (m.size() != ml_kem768::seed_bytes)
        return errc::invalid_argument;
    return make_responder(make_x25519_agreement_from_private(x25519_private), secret_bytes(m));
}

} // namespace longhaul
