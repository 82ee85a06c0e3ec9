// One run of a key exchange method (RFC 4253 §8, RFC 5656 §4, RFC 8731,
// RFC 4419) for either role: the method messages (30..34), the exchange hash,
// and the host key signature. KEXINIT and NEWKEYS are the transport's.
#pragma once

#include "common/bytes.hpp"
#include "common/crypto/key_agreement.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/private_key.hpp"
#include "common/keys/public_key.hpp"
#include "common/result.hpp"
#include "common/transport/algorithms.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul {

// The server's source of group-exchange groups (sshd's moduli file); given
// the client's clamped (min, preferred, max) it returns a group or nullopt.
using gex_group_provider = std::function<std::optional<dh_group>(std::uint32_t min, std::uint32_t preferred,
                                                                 std::uint32_t max)>;

// Signs `data` with the private half of a server host key, as
// private_key::sign does (an SSH signature blob: string sig_alg, string
// signature). A separate function so that the private key may live in
// another process (sshd's privileged monitor, issue 12).
using host_key_sign_function = std::function<result<bytes>(std::string_view sig_alg, byte_span data)>;

// Everything hashed before K_S, and the sizes that pick DH parameters.
struct kex_context {
    std::string v_c, v_s; // identification lines without CR LF
    bytes i_c, i_s;       // KEXINIT payloads
    // A certificate algorithm ("rsa-sha2-512-cert-v01@openssh.com") signs
    // with its plain algorithm ("rsa-sha2-512") and the certified key.
    std::string host_key_algorithm;
    // Server: K_S when it is not the signing key's own blob (the
    // certificate of a HostCertificate key).
    bytes server_host_key_blob;
    std::size_t we_need = 0; // OpenSSH's kex->we_need (bytes): sizes the DH private exponent
    std::size_t dh_need = 0; // OpenSSH's kex->dh_need (bytes): sizes the requested GEX group
};

struct kex_outcome {
    // K encoded as the exchange hash and the KDF take it (length prefix
    // included): an mpint, or a string for mlkem768x25519-sha256.
    secret_bytes shared_secret;
    bytes exchange_hash;
    // The server's host key: client, verified; server, the one it signed with.
    std::optional<public_key> host_key;
    // Client, for a certificate algorithm: the certificate the server sent
    // (its CA signature checked; host_key is the key it certifies). Whether
    // to trust its CA is the caller's decision.
    std::optional<certificate> host_certificate;
    // Client: the server's signature of the exchange hash, as sent (string
    // algorithm, string signature), for an agent's session-bind@openssh.com.
    bytes host_key_signature;
};

class key_exchange {
public:
    static result<std::unique_ptr<key_exchange>> client(const kex_method& method, kex_context ctx);
    // `host_key` is the public half of the key `sign` signs with.
    static result<std::unique_ptr<key_exchange>> server(const kex_method& method, kex_context ctx,
                                                        public_key host_key, host_key_sign_function sign,
                                                        gex_group_provider groups);
    static result<std::unique_ptr<key_exchange>> server(const kex_method& method, kex_context ctx,
                                                        const private_key& host_key, gex_group_provider groups);
    ~key_exchange();

    // Messages to send at the start (client: ECDH/DH init or GEX request).
    result<void> start(std::vector<bytes>& out);
    // Handles one method message; appends replies to `out`. Returns true
    // when the exchange hash is final (and, for the client, the host key
    // signature verified). errc::protocol_error for a message out of place.
    result<bool> handle(byte_span payload, std::vector<bytes>& out);

    // A client that sent its first message with its KEXINIT (a guess)
    // learns the final payloads only afterwards; both are hashed when the
    // server's reply comes.
    void set_client_kexinit(bytes i_c) { ctx_.i_c = std::move(i_c); }
    void set_server_kexinit(bytes i_s) { ctx_.i_s = std::move(i_s); }
    kex_outcome& outcome() noexcept { return outcome_; }
    hash_alg hash() const noexcept { return method_.hash; }
    // Human-readable failure detail for logs and disconnect messages.
    const std::string& failure() const noexcept { return failure_; }

private:
    key_exchange(const kex_method& method, kex_context ctx, bool is_server);

    result<void> make_agreement(const dh_group* group);
    void write_public(wire_writer& w) const;
    byte_span read_public(wire_reader& r) const;
    bytes exchange_hash(byte_span host_key_blob, byte_span client_public, byte_span server_public) const;
    result<bool> client_reply(byte_span payload);
    result<bool> server_init(byte_span payload, std::vector<bytes>& out);
    result<void> client_group(byte_span payload, std::vector<bytes>& out);
    result<void> server_gex_request(byte_span payload, std::vector<bytes>& out);
    result<void> fail(errc e, std::string why);

    const kex_method& method_;
    kex_context ctx_;
    bool server_;
    public_key host_key_;              // server
    host_key_sign_function sign_;      // server
    gex_group_provider groups_;
    std::unique_ptr<key_agreement> agreement_;
    std::uint8_t expect_;
    // Group exchange state hashed into H.
    std::uint32_t gex_min_ = 0, gex_n_ = 0, gex_max_ = 0;
    dh_group gex_group_;
    kex_outcome outcome_;
    std::string failure_;
};

// RFC 4253 §7.2: derives `size` bytes for key letter 'A'..'F'.
secret_bytes derive_key(hash_alg hash, byte_span encoded_shared_secret, byte_span exchange_hash,
                        byte_span session_id, char letter, std::size_t size);

} // namespace longhaul
