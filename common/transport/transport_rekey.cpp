// The transport core's keys once an exchange is done, and when to change
// them: the ciphers, MACs and compression each NEWKEYS installs, the
// parallel crypto engine and delayed compression after authentication, and
// the re-key limits by volume, packets and time. Apart from
// transport_kex.cpp, the exchange itself.
#include "common/transport/transport.hpp"

#include <algorithm>

namespace longhaul {

namespace {

// OpenSSH rekeys before a direction's sequence number can wrap.
constexpr std::uint64_t max_packets_per_key = std::uint64_t(1) << 31;

// OpenSSH's default rekey volume: 2^(2*block bits) blocks for 128-bit block
// ciphers, 1 GiB for smaller blocks (chacha20-poly1305's 8).
std::uint64_t default_rekey_bytes(std::string_view cipher)
{
    const cipher_info* c = find_cipher(cipher);
    if (c == nullptr || c->block_size < 16)
        return std::uint64_t(1) << 30;
    return (std::uint64_t(1) << 32) * c->block_size;
}

} // namespace

std::uint64_t transport::rekey_limit_for(std::string_view cipher) const
{
    const std::uint64_t cipher_limit = default_rekey_bytes(cipher);
    return config_.rekey_limit_bytes != 0 ? std::min(config_.rekey_limit_bytes, cipher_limit) : cipher_limit;
}

bool transport::install_keys(bool outgoing)
{
    const auto& algs = kex_.algs;
    const bool c2s = is_client() == outgoing;
    const std::string& cipher = c2s ? algs.cipher_c2s : algs.cipher_s2c;
    const std::string& mac = c2s ? algs.mac_c2s : algs.mac_s2c;
    const std::string& compression = c2s ? algs.compression_c2s : algs.compression_s2c;
    const cipher_info* ci = find_cipher(cipher);
    const mac_info* mi = mac.empty() ? nullptr : find_mac(mac);
    auto& outcome = kex_.run->outcome();
    const hash_alg h = kex_.run->hash();
    auto derive = [&](char letter, std::size_t size) {
        return derive_key(h, outcome.shared_secret, outcome.exchange_hash, session_id_, letter, size);
    };
    direction_keys keys;
    keys.iv = derive(c2s ? 'A' : 'B', ci->iv_size);
    keys.enc_key = derive(c2s ? 'C' : 'D', ci->key_size);
    if (mi != nullptr)
        keys.mac_key = derive(c2s ? 'E' : 'F', mi->key_size);
    auto pc = make_packet_cipher(cipher, mac, keys, outgoing ? cipher_direction::seal : cipher_direction::open);
    if (!pc) {
        close_with(pc.error(), disconnect_reason_for(pc.error()), "cannot initialise cipher " + cipher);
        return false;
    }
    (outgoing ? out_keys_ : in_keys_) = std::move(keys);
    const std::uint64_t limit = rekey_limit_for(cipher);
    const bool enable_zlib = compression == "zlib" || (compression == "zlib@openssh.com" && authenticated_);
    if (outgoing) {
        sender_.set_cipher(std::move(*pc));
        rekey_limit_out_ = limit;
        if (compression == "none")
            sender_.set_compressor(nullptr);
        else if (enable_zlib && !sender_.compressing())
            sender_.set_compressor(std::make_unique<compressor>());
    } else {
        receiver_.set_cipher(std::move(*pc));
        rekey_limit_in_ = limit;
        if (compression == "none")
            receiver_.set_decompressor(nullptr);
        else if (enable_zlib && !receiver_.decompressing())
            receiver_.set_decompressor(std::make_unique<decompressor>());
    }
    return true;
}

void transport::set_crypto_engine(crypto_engine* engine)
{
    crypto_engine_ = engine;
    if (authenticated_ || engine == nullptr) {
        sender_.set_crypto_engine(engine);
        receiver_.set_crypto_engine(engine);
    }
}

void transport::user_authenticated()
{
    authenticated_ = true;
    if (crypto_engine_ != nullptr) {
        sender_.set_crypto_engine(crypto_engine_);
        receiver_.set_crypto_engine(crypto_engine_);
    }
    if (algs_.compression_c2s == "zlib@openssh.com" || algs_.compression_s2c == "zlib@openssh.com") {
        const bool out_zlib = (is_client() ? algs_.compression_c2s : algs_.compression_s2c) == "zlib@openssh.com";
        const bool in_zlib = (is_client() ? algs_.compression_s2c : algs_.compression_c2s) == "zlib@openssh.com";
        if (out_zlib && !sender_.compressing())
            sender_.set_compressor(std::make_unique<compressor>());
        if (in_zlib && !receiver_.decompressing())
            receiver_.set_decompressor(std::make_unique<decompressor>());
    }
}

void transport::request_rekey()
{
    if (!closed_ && established_ && !kex_.active)
        send_kexinit();
}

void transport::maybe_rekey()
{
    if (closed_ || !established_ || kex_.active || !authenticated_)
        return;
    const auto& out = sender_.usage();
    const auto& in = receiver_.usage();
    // What we receive re-keys a sixteenth early (64 MiB of a GiB, more than
    // a 1 Gbit/s x 200 ms path holds). A bulk sender would otherwise reach
    // the limit first (its count leads ours by what is in flight) and start
    // the exchange itself: a client waits for the server's KEXINIT, then
    // for the reply to its key (two round trips without data), a server for
    // the client's KEXINIT and key (one). Started by the receiver, the
    // exchange costs a sending client one round trip (the reply) and a
    // sending server none when our guess is right (see send_kexinit).
    bool due = out.bytes >= rekey_limit_out_ || in.bytes >= rekey_limit_in_ - rekey_limit_in_ / 16 ||
               out.packets >= max_packets_per_key || in.packets >= max_packets_per_key;
    if (config_.rekey_interval.count() > 0 && now_ >= last_kex_time_ + config_.rekey_interval)
        due = true;
    if (due)
        send_kexinit();
}

void transport::advance_time(steady_time now)
{
    now_ = now;
    maybe_rekey();
}

std::optional<steady_time> transport::next_deadline() const
{
    if (config_.rekey_interval.count() <= 0 || !established_ || kex_.active || closed_ || !authenticated_)
        return std::nullopt;
    return last_kex_time_ + config_.rekey_interval;
}

} // namespace longhaul
