// Hybrid key agreements of a post-quantum KEM with X25519, as OpenSSH has
// them:
//
//   mlkem768x25519-sha256 (draft-ietf-sshm-mlkem-hybrid-kex; OpenSSH 9.9+)
//   sntrup761x25519-sha512 (OpenSSH 8.5+, 9.x's default)
//
//   C_INIT  = KEM public key || X25519 public (32)        client -> server
//   S_REPLY = KEM ciphertext || X25519 public (32)        server -> client
//   K       = HASH(K_PQ || K_CL), SHA-256 or SHA-512 as the method's name says
//
// A KEM is not symmetric as Diffie-Hellman is: the server's public value is
// the ciphertext it makes for the client's key, so it exists only once the
// client's value has been seen. key_exchange asks for the server's value
// after derive(), which is when the responder has one.
#include "common/crypto/hash.hpp"
#include "common/crypto/key_agreement.hpp"
#include "common/crypto/ml_kem.hpp"
#include "common/crypto/sntrup761.hpp"

#include <functional>
#include <optional>
#include <stdexcept>

namespace longhaul {

namespace {

constexpr std::size_t x25519_bytes = 32;

struct kem_keys {
    bytes public_key;
    secret_bytes secret_key;
};
struct kem_output {
    bytes ciphertext;
    secret_bytes shared_secret;
};

// What the hybrid needs of a KEM: one row per method.
struct kem_ops {
    std::size_t public_key_bytes;
    std::size_t ciphertext_bytes;
    hash_alg hash; // K = hash(K_PQ || K_CL)
    result<kem_keys> (*key_gen)();
    result<kem_output> (*encaps)(byte_span public_key);
    result<secret_bytes> (*decaps)(const secret_bytes& secret_key, byte_span ciphertext);
};

constexpr kem_ops mlkem768_ops{
    ml_kem768::encapsulation_key_bytes,
    ml_kem768::ciphertext_bytes,
    hash_alg::sha256,
    []() -> result<kem_keys> {
        auto k = ml_kem768::key_gen();
        if (!k)
            return k.error();
        return kem_keys{std::move(k->encapsulation_key), std::move(k->decapsulation_key)};
    },
    [](byte_span pk) -> result<kem_output> {
        auto e = ml_kem768::encaps(pk);
        if (!e)
            return e.error();
        return kem_output{std::move(e->ciphertext), std::move(e->shared_secret)};
    },
    [](const secret_bytes& sk, byte_span ct) { return ml_kem768::decaps(sk, ct); },
};

constexpr kem_ops sntrup761_ops{
    sntrup761::public_key_bytes,
    sntrup761::ciphertext_bytes,
    hash_alg::sha512,
    []() -> result<kem_keys> {
        auto k = sntrup761::key_gen();
        if (!k)
            return k.error();
        return kem_keys{std::move(k->public_key), std::move(k->secret_key)};
    },
    [](byte_span pk) -> result<kem_output> {
        auto e = sntrup761::encaps(pk);
        if (!e)
            return e.error();
        return kem_output{std::move(e->ciphertext), std::move(e->shared_secret)};
    },
    [](const secret_bytes& sk, byte_span ct) { return sntrup761::decaps(sk, ct); },
};

const kem_ops& ops_of(hybrid_kem kem) noexcept
{
    return kem == hybrid_kem::sntrup761_x25519 ? sntrup761_ops : mlkem768_ops;
}

// K = HASH(K_PQ || K_CL). The hasher throws when OpenSSL fails (or memory
// runs out): an error here, so that the exchange ends through result<> and
// the secrets on the stack are wiped as it unwinds.
result<secret_bytes> combine(hash_alg hash, const secret_bytes& pq, const secret_bytes& classical)
{
    try {
        secret_bytes k(digest_size(hash));
        hasher h(hash);
        h.update(pq.span()).update(classical.span()).finish_into(k.span());
        return k;
    } catch (const std::exception&) {
        return errc::crypto_error;
    }
}

class hybrid_initiator final : public key_agreement {
public:
    hybrid_initiator(const kem_ops& ops, kem_keys kem, std::unique_ptr<key_agreement> x25519)
        : ops_(ops), kem_(std::move(kem)), x25519_(std::move(x25519))
    {
        public_ = kem_.public_key;
        const auto x = x25519_->public_value();
        public_.insert(public_.end(), x.begin(), x.end());
    }

    byte_span public_value() const noexcept override { return public_; }

    // (May run more than once, on the same key: the tests compare the
    // secrets of a changed and a true reply. key_exchange drops the
    // agreement after its one reply.)
    result<secret_bytes> derive(byte_span reply) override
    {
        if (reply.size() != ops_.ciphertext_bytes + x25519_bytes)
            return errc::invalid_argument;
        auto pq = ops_.decaps(kem_.secret_key, reply.first(ops_.ciphertext_bytes));
        if (!pq)
            return pq.error();
        auto classical = x25519_->derive(reply.subspan(ops_.ciphertext_bytes));
        if (!classical)
            return classical.error();
        return combine(ops_.hash, *pq, *classical);
    }

private:
    const kem_ops& ops_;
    kem_keys kem_;
    std::unique_ptr<key_agreement> x25519_;
    bytes public_;
};

class hybrid_responder final : public key_agreement {
public:
    // `encaps`: ops.encaps, or a fixed-message one for known-answer tests.
    using encaps_fn = std::function<result<kem_output>(byte_span)>;
    hybrid_responder(const kem_ops& ops, std::unique_ptr<key_agreement> x25519, encaps_fn encaps)
        : ops_(ops), x25519_(std::move(x25519)), encaps_(std::move(encaps))
    {
    }

    // Empty until derive() has made the ciphertext.
    byte_span public_value() const noexcept override { return public_; }

    result<secret_bytes> derive(byte_span init) override
    {
        if (init.size() != ops_.public_key_bytes + x25519_bytes || !public_.empty())
            return errc::invalid_argument;
        auto kem = encaps_(init.first(ops_.public_key_bytes));
        if (!kem)
            return kem.error();
        auto classical = x25519_->derive(init.subspan(ops_.public_key_bytes));
        if (!classical)
            return classical.error();
        auto k = combine(ops_.hash, kem->shared_secret, *classical);
        if (!k)
            return k.error();
        try {
            public_ = std::move(kem->ciphertext);
            const auto x = x25519_->public_value();
            public_.insert(public_.end(), x.begin(), x.end());
        } catch (const std::exception&) { // memory
            public_.clear();
            return errc::crypto_error;
        }
        return k;
    }

private:
    const kem_ops& ops_;
    std::unique_ptr<key_agreement> x25519_;
    encaps_fn encaps_;
    bytes public_;
};

result<std::unique_ptr<key_agreement>> make_initiator(const kem_ops& ops, result<kem_keys> kem,
                                                      result<std::unique_ptr<key_agreement>> x25519)
{
    if (!kem)
        return kem.error();
    if (!x25519)
        return x25519.error();
    return std::unique_ptr<key_agreement>(new hybrid_initiator(ops, std::move(*kem), std::move(*x25519)));
}

result<std::unique_ptr<key_agreement>> make_responder(const kem_ops& ops, result<std::unique_ptr<key_agreement>> x25519,
                                                      hybrid_responder::encaps_fn encaps)
{
    if (!x25519)
        return x25519.error();
    return std::unique_ptr<key_agreement>(new hybrid_responder(ops, std::move(*x25519), std::move(encaps)));
}

} // namespace

result<std::unique_ptr<key_agreement>> make_hybrid_kem_agreement(hybrid_kem kem, bool responder_side)
{
    const kem_ops& ops = ops_of(kem);
    try {
        if (responder_side)
            return make_responder(ops, make_x25519_agreement(), ops.encaps);
        return make_initiator(ops, ops.key_gen(), make_x25519_agreement());
    } catch (const std::exception&) { // memory
        return errc::crypto_error;
    }
}

result<std::unique_ptr<key_agreement>> make_mlkem768x25519_initiator_from(byte_span d, byte_span z,
                                                                         byte_span x25519_private)
{
    if (d.size() != ml_kem768::seed_bytes || z.size() != ml_kem768::seed_bytes)
        return errc::invalid_argument;
    try {
        auto k = ml_kem768::key_gen_internal(d, z);
        return make_initiator(mlkem768_ops, kem_keys{std::move(k.encapsulation_key), std::move(k.decapsulation_key)},
                              make_x25519_agreement_from_private(x25519_private));
    } catch (const std::runtime_error&) { // OpenSSL's SHA-3 failed
        return errc::crypto_error;
    }
}

result<std::unique_ptr<key_agreement>> make_mlkem768x25519_responder_from(byte_span m, byte_span x25519_private)
{
    if (m.size() != ml_kem768::seed_bytes)
        return errc::invalid_argument;
    auto fixed = [msg = secret_bytes(m)](byte_span pk) -> result<kem_output> {
        auto e = ml_kem768::encaps_internal(pk, msg.span());
        if (!e)
            return e.error();
        return kem_output{std::move(e->ciphertext), std::move(e->shared_secret)};
    };
    return make_responder(mlkem768_ops, make_x25519_agreement_from_private(x25519_private), std::move(fixed));
}

} // namespace longhaul
