// Packet cipher throughput: Longhaul's packet layer beside the bare OpenSSL
// EVP calls for the same primitives over the same bytes, in one run.
//
// "raw EVP" is what a caller writing straight to EVP needs per packet (set
// the IV, AAD, update, final and tag; for chacha20-poly1305 a ChaCha20 pass
// and a Poly1305 pass; for CTR+HMAC an AES-CTR pass and an EVP_MAC HMAC pass),
// so the overhead column is what the packet layer adds on top of the
// primitive (for UMAC, which OpenSSL lacks, the raw side calls our umac
// class directly). Longhaul's "open" is peek_length() + open_body(), a receiver's whole
// per-packet cost. A second table gives EVP's streaming rates (no per-packet
// set-up at all, as `openssl speed -evp` measures) for scale.
//
// With --engine it measures the parallel crypto engine instead (issue 13):
// for each algorithm, one line per worker count, in a fixed form that runs
// can be compared by:
//
//   engine <cipher-name> workers=<n> MB/s=<x>
//
// (cipher-name is the cipher, or cipher+mac for CTR). Each figure is a
// batch of packets sealed and then opened again (peek_length() one packet
// after another, as a receiver must, then open()), through the engine with
// n threads in forced mode; workers=0 is the serial path, no engine at all.
// MB/s counts each packet once (seal and open together).
//
// Usage: cipher_bench [--seconds N] [--size BYTES] [--filter TEXT] [--rounds N]
//        cipher_bench --engine [--workers MAX] [--batch PACKETS] [...]
#include "common/crypto/crypto_engine.hpp"
#include "common/crypto/packet_cipher.hpp"
#include "common/crypto/umac.hpp"
#include "common/wire.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace longhaul;
using bench_clock = std::chrono::steady_clock;

namespace {

// ---- OpenSSL allocation counter (shows the per-packet path allocates nothing) ----

std::atomic<std::uint64_t> openssl_allocs{0};

void* counting_malloc(std::size_t n, const char*, int)
{
    openssl_allocs.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(n);
}
void* counting_realloc(void* p, std::size_t n, const char*, int)
{
    openssl_allocs.fetch_add(1, std::memory_order_relaxed);
    return std::realloc(p, n);
}
void counting_free(void* p, const char*, int) { std::free(p); }

[[noreturn]] void die(const std::string& what)
{
    std::fprintf(stderr, "cipher_bench: %s\n", what.c_str());
    std::exit(1);
}

void check(bool ok, const char* what)
{
    if (!ok)
        die(what);
}

// ---- timing ----

struct rate {
    double ops_per_s = 0;
    double allocs_per_op = 0;
};

// Runs `op` back to back for about `seconds`.
template <class Op>
rate time_loop(double seconds, Op&& op)
{
    const auto limit = std::chrono::duration<double>(seconds);
    const std::uint64_t a0 = openssl_allocs.load();
    std::uint64_t ops = 0;
    const auto t0 = bench_clock::now();
    auto t = t0;
    do {
        for (int i = 0; i < 16; ++i)
            op();
        ops += 16;
        t = bench_clock::now();
    } while (t - t0 < limit);
    const double s = std::chrono::duration<double>(t - t0).count();
    return {double(ops) / s, double(openssl_allocs.load() - a0) / double(ops)};
}

// Times only `op`; `restore` (untimed) puts the buffer back first, because
// opening consumes the sealed packet.
template <class Restore, class Op>
rate time_each(double seconds, Restore&& restore, Op&& op)
{
    const auto limit = std::chrono::duration<double>(seconds);
    std::uint64_t ops = 0;
    std::uint64_t allocs = 0;
    bench_clock::duration spent{};
    const auto start = bench_clock::now();
    while (bench_clock::now() - start < limit) {
        restore();
        const std::uint64_t a0 = openssl_allocs.load();
        const auto t0 = bench_clock::now();
        op();
        spent += bench_clock::now() - t0;
        allocs += openssl_allocs.load() - a0;
        ++ops;
    }
    return {double(ops) / std::chrono::duration<double>(spent).count(), double(allocs) / double(ops)};
}

// ---- raw EVP baselines ----

struct raw_protection {
    virtual ~raw_protection() = default;
    virtual void seal(std::uint32_t seq, mutable_byte_span packet, std::uint8_t* tag) = 0;
    virtual bool open(std::uint32_t seq, mutable_byte_span packet, const std::uint8_t* tag) = 0;
};

struct evp_ctx {
    EVP_CIPHER_CTX* p = EVP_CIPHER_CTX_new();
    ~evp_ctx() { EVP_CIPHER_CTX_free(p); }
};
struct mac_ctx {
    EVP_MAC* mac;
    EVP_MAC_CTX* p;
    explicit mac_ctx(const char* name) : mac(EVP_MAC_fetch(nullptr, name, nullptr)), p(EVP_MAC_CTX_new(mac)) {}
    ~mac_ctx()
    {
        EVP_MAC_CTX_free(p);
        EVP_MAC_free(mac);
    }
};

class raw_gcm final : public raw_protection {
public:
    explicit raw_gcm(int key_bits)
    {
        const std::vector<std::uint8_t> key(std::size_t(key_bits / 8), 0x5a);
        EVP_CIPHER* c = EVP_CIPHER_fetch(nullptr, key_bits == 128 ? "AES-128-GCM" : "AES-256-GCM", nullptr);
        check(EVP_CipherInit_ex2(ctx_.p, c, key.data(), nullptr, 1, nullptr) == 1, "gcm init");
        EVP_CIPHER_free(c);
    }
    void seal(std::uint32_t seq, mutable_byte_span packet, std::uint8_t* tag) override
    {
        int n = 0;
        set_iv(seq, 1);
        EVP_CipherUpdate(ctx_.p, nullptr, &n, packet.data(), 4);
        EVP_CipherUpdate(ctx_.p, packet.data() + 4, &n, packet.data() + 4, int(packet.size() - 4));
        EVP_CipherFinal_ex(ctx_.p, scratch_, &n);
        EVP_CIPHER_CTX_ctrl(ctx_.p, EVP_CTRL_AEAD_GET_TAG, 16, tag);
    }
    bool open(std::uint32_t seq, mutable_byte_span packet, const std::uint8_t* tag) override
    {
        int n = 0;
        set_iv(seq, 0);
        EVP_CipherUpdate(ctx_.p, nullptr, &n, packet.data(), 4);
        EVP_CipherUpdate(ctx_.p, packet.data() + 4, &n, packet.data() + 4, int(packet.size() - 4));
        EVP_CIPHER_CTX_ctrl(ctx_.p, EVP_CTRL_AEAD_SET_TAG, 16, const_cast<std::uint8_t*>(tag));
        return EVP_CipherFinal_ex(ctx_.p, scratch_, &n) == 1;
    }

private:
    void set_iv(std::uint32_t seq, int enc)
    {
        std::uint8_t iv[12] = {1, 2, 3, 4};
        store_u64(iv + 4, seq);
        EVP_CipherInit_ex2(ctx_.p, nullptr, nullptr, iv, enc, nullptr);
    }
    evp_ctx ctx_;
    std::uint8_t scratch_[16];
};

class raw_chacha_poly final : public raw_protection {
public:
    raw_chacha_poly() : poly_("POLY1305")
    {
        const std::uint8_t key[32] = {7};
        EVP_CIPHER* c = EVP_CIPHER_fetch(nullptr, "ChaCha20", nullptr);
        check(EVP_CipherInit_ex2(ctx_.p, c, key, nullptr, 1, nullptr) == 1, "chacha init");
        EVP_CIPHER_free(c);
    }
    void seal(std::uint32_t seq, mutable_byte_span packet, std::uint8_t* tag) override
    {
        crypt(seq, packet);
        mac(packet, tag);
    }
    bool open(std::uint32_t seq, mutable_byte_span packet, const std::uint8_t* tag) override
    {
        std::uint8_t expect[16];
        mac(packet, expect);
        if (CRYPTO_memcmp(expect, tag, 16) != 0)
            return false;
        crypt(seq, packet);
        return true;
    }

private:
    void crypt(std::uint32_t seq, mutable_byte_span packet)
    {
        std::uint8_t iv[16] = {1};
        store_u64(iv + 8, seq);
        int n = 0;
        EVP_CipherInit_ex2(ctx_.p, nullptr, nullptr, iv, -1, nullptr);
        EVP_CipherUpdate(ctx_.p, packet.data() + 4, &n, packet.data() + 4, int(packet.size() - 4));
    }
    void mac(byte_span packet, std::uint8_t* tag)
    {
        std::size_t n = 0;
        EVP_MAC_init(poly_.p, poly_key_, 32, nullptr);
        EVP_MAC_update(poly_.p, packet.data(), packet.size());
        EVP_MAC_final(poly_.p, tag, &n, 16);
    }
    evp_ctx ctx_;
    mac_ctx poly_;
    std::uint8_t poly_key_[32] = {9, 8, 7};
};

// AES-CTR and a separate MAC, in either order (classic or -etm): the
// cipher side shared by the HMAC and UMAC raw baselines.
class raw_ctr_then_mac : public raw_protection {
public:
    raw_ctr_then_mac(int key_bits, bool etm) : etm_(etm)
    {
        const std::vector<std::uint8_t> key(std::size_t(key_bits / 8), 0x33);
        const std::string name = "AES-" + std::to_string(key_bits) + "-CTR";
        EVP_CIPHER* c = EVP_CIPHER_fetch(nullptr, name.c_str(), nullptr);
        check(EVP_CipherInit_ex2(ctx_.p, c, key.data(), nullptr, 1, nullptr) == 1, "ctr init");
        EVP_CIPHER_free(c);
    }
    void seal(std::uint32_t seq, mutable_byte_span packet, std::uint8_t* tag) override
    {
        if (etm_) {
            crypt(packet.subspan(4));
            mac(seq, packet, tag);
        } else {
            mac(seq, packet, tag);
            crypt(packet);
        }
    }
    bool open(std::uint32_t seq, mutable_byte_span packet, const std::uint8_t* tag) override
    {
        std::uint8_t expect[64];
        if (etm_) {
            mac(seq, packet, expect);
            if (CRYPTO_memcmp(expect, tag, tag_size()) != 0)
                return false;
            crypt(packet.subspan(4));
            return true;
        }
        crypt(packet);
        mac(seq, packet, expect);
        return CRYPTO_memcmp(expect, tag, tag_size()) == 0;
    }

protected:
    virtual void mac(std::uint32_t seq, byte_span packet, std::uint8_t* out) = 0;
    virtual std::size_t tag_size() const = 0;

private:
    void crypt(mutable_byte_span body)
    {
        const std::uint8_t iv[16] = {0xf0};
        int n = 0;
        EVP_CipherInit_ex2(ctx_.p, nullptr, nullptr, iv, -1, nullptr);
        EVP_CipherUpdate(ctx_.p, body.data(), &n, body.data(), int(body.size()));
    }
    evp_ctx ctx_;
    bool etm_;
};

class raw_ctr_hmac final : public raw_ctr_then_mac {
public:
    raw_ctr_hmac(int key_bits, const char* digest, std::size_t mac_size, bool etm)
        : raw_ctr_then_mac(key_bits, etm), hmac_("HMAC"), mac_size_(mac_size)
    {
        OSSL_PARAM params[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>(digest), 0),
            OSSL_PARAM_construct_end(),
        };
        const std::uint8_t mac_key[64] = {4};
        check(EVP_MAC_init(hmac_.p, mac_key, mac_size, params) == 1, "hmac init");
    }

private:
    void mac(std::uint32_t seq, byte_span packet, std::uint8_t* out) override
    {
        std::uint8_t seq_be[4];
        store_u32(seq_be, seq);
        std::size_t n = 0;
        EVP_MAC_init(hmac_.p, nullptr, 0, nullptr); // same key: OpenSSL's documented re-init
        EVP_MAC_update(hmac_.p, seq_be, 4);
        EVP_MAC_update(hmac_.p, packet.data(), packet.size());
        EVP_MAC_final(hmac_.p, out, &n, 64);
    }
    std::size_t tag_size() const override { return mac_size_; }
    mac_ctx hmac_;
    std::size_t mac_size_;
};

// UMAC has no EVP form (OpenSSL does not implement it), so its "raw" side
// is an EVP AES-CTR pass and our umac class (common/crypto/umac.hpp) called
// directly: the overhead column is then the packet layer's alone.
class raw_ctr_umac final : public raw_ctr_then_mac {
public:
    raw_ctr_umac(std::size_t tag_size, bool etm)
        : raw_ctr_then_mac(128, etm), umac_(std::vector<std::uint8_t>(16, 0x44), tag_size)
    {
    }

private:
    void mac(std::uint32_t seq, byte_span packet, std::uint8_t* out) override
    {
        umac_.begin();
        umac_.update(packet);
        check(umac_.finish(std::uint64_t(seq), out), "umac");
    }
    std::size_t tag_size() const override { return umac_.size(); }
    umac umac_;
};

// ---- the cases ----

struct bench_case {
    std::string cipher;
    std::string mac;
    std::unique_ptr<raw_protection> (*make_raw)();
};

std::vector<bench_case> cases()
{
    return {
        {"chacha20-poly1305@openssh.com", "", [] { return std::unique_ptr<raw_protection>(new raw_chacha_poly); }},
        {"aes128-gcm@openssh.com", "", [] { return std::unique_ptr<raw_protection>(new raw_gcm(128)); }},
        {"aes256-gcm@openssh.com", "", [] { return std::unique_ptr<raw_protection>(new raw_gcm(256)); }},
        {"aes128-ctr", "hmac-sha2-256-etm@openssh.com",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_hmac(128, "SHA2-256", 32, true)); }},
        {"aes128-ctr", "umac-64-etm@openssh.com",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_umac(8, true)); }},
        {"aes128-ctr", "umac-128-etm@openssh.com",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_umac(16, true)); }},
        {"aes192-ctr", "hmac-sha2-256-etm@openssh.com",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_hmac(192, "SHA2-256", 32, true)); }},
        {"aes256-ctr", "hmac-sha2-256-etm@openssh.com",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_hmac(256, "SHA2-256", 32, true)); }},
        {"aes128-ctr", "hmac-sha2-512-etm@openssh.com",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_hmac(128, "SHA2-512", 64, true)); }},
        {"aes128-ctr", "hmac-sha1-etm@openssh.com",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_hmac(128, "SHA1", 20, true)); }},
        {"aes128-ctr", "hmac-sha2-256",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_hmac(128, "SHA2-256", 32, false)); }},
        {"aes128-ctr", "hmac-sha2-512",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_hmac(128, "SHA2-512", 64, false)); }},
        {"aes128-ctr", "hmac-sha1",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_hmac(128, "SHA1", 20, false)); }},
        {"aes128-ctr", "umac-64@openssh.com",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_umac(8, false)); }},
        {"aes128-ctr", "umac-128@openssh.com",
         [] { return std::unique_ptr<raw_protection>(new raw_ctr_umac(16, false)); }},
    };
}

direction_keys keys_for(const std::string& cipher, const std::string& mac)
{
    const cipher_info* ci = find_cipher(cipher);
    const mac_info* mi = mac.empty() ? nullptr : find_mac(mac);
    direction_keys k;
    k.enc_key = secret_bytes(ci->key_size);
    k.iv = secret_bytes(ci->iv_size);
    k.mac_key = secret_bytes(mi ? mi->key_size : 0);
    for (std::size_t i = 0; i < k.enc_key.size(); ++i)
        k.enc_key.data()[i] = std::uint8_t(i * 3 + 1);
    return k;
}

// A plaintext packet whose encrypted part is `body` bytes.
bytes make_packet(const packet_cipher& pc, std::size_t body)
{
    const std::size_t total = pc.length_excluded_from_padding() ? 4 + body : body;
    bytes p(total);
    for (std::size_t i = 0; i < p.size(); ++i)
        p[i] = std::uint8_t(i * 31);
    store_u32(p.data(), std::uint32_t(total - 4));
    p[4] = 8;
    return p;
}

std::string cpu_model()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0)
            return line.substr(line.find(':') + 2);
    return "unknown";
}

struct options {
    double seconds = 1.0;
    std::size_t size = 32768;
    std::string filter;
    int rounds = 5;
    bool engine = false;
    unsigned max_workers = 0; // --engine: up to this many (default: the CPUs)
    std::size_t batch = 16;   // --engine: packets per batch
};

void print_row(const std::string& name, const char* op, double bytes_per_op, const rate& ours, const rate& raw)
{
    const double mine = ours.ops_per_s * bytes_per_op / 1e6;
    const double evp = raw.ops_per_s * bytes_per_op / 1e6;
    std::printf("%-46s %-4s %9.0f %9.0f %+8.1f%% %7.2f %7.2f\n", name.c_str(), op, mine, evp,
                (evp / mine - 1.0) * 100.0, ours.allocs_per_op, raw.allocs_per_op);
}

rate best(const rate& a, const rate& b) { return a.ops_per_s >= b.ops_per_s ? a : b; }

void run_case(const bench_case& bc, const options& opt)
{
    auto made = make_packet_cipher(bc.cipher, bc.mac, keys_for(bc.cipher, bc.mac), cipher_direction::seal);
    if (!made)
        die("cannot build " + bc.cipher);
    packet_cipher& pc = **made;
    auto raw = bc.make_raw();

    const bytes plain = make_packet(pc, opt.size);
    bytes work = plain;
    bytes tag(64);

    // Every packet gets the next position, as on a connection: a new
    // sequence number (and so new ChaCha20 nonces), GCM invocation counter
    // and CTR block offset. Opening consumes the sealed packet, so each open
    // is preceded by an untimed seal of a fresh copy at its position.
    packet_position pos{12345, 12345, 999};
    auto advance = [&] {
        pos.seq += 1;
        pos.index += 1;
        pos.block_offset += pc.blocks_used(plain.size());
    };
    auto restore_ours = [&] {
        advance();
        std::memcpy(work.data(), plain.data(), work.size());
        pc.seal(pos, work, tag);
    };
    auto restore_raw = [&] {
        advance();
        std::memcpy(work.data(), plain.data(), work.size());
        raw->seal(pos.seq, work, tag.data());
    };
    const auto tag_span = byte_span(tag).first(pc.tag_size());

    // Interleave rounds so that a burst of load from elsewhere hits both
    // sides alike; keep each side's best round.
    const double slice = opt.seconds / opt.rounds;
    rate seal_ours, seal_raw, open_ours, open_raw;
    for (int r = 0; r < opt.rounds; ++r) {
        seal_ours = best(seal_ours, time_loop(slice, [&] {
                             advance();
                             pc.seal(pos, work, tag);
                         }));
        seal_raw = best(seal_raw, time_loop(slice, [&] {
                            advance();
                            raw->seal(pos.seq, work, tag.data());
                        }));
        open_ours = best(open_ours, time_each(slice, restore_ours, [&] {
                             // A receiver peeks at the length before opening.
                             const auto prefix = byte_span(work).first(pc.length_prefix_size());
                             if (pc.peek_length(pos, prefix) != plain.size() - 4 || !pc.open_body(pos, work, tag_span))
                                 die("open failed");
                         }));
        open_raw = best(open_raw, time_each(slice, restore_raw, [&] {
                            if (!raw->open(pos.seq, work, tag.data()))
                                die("raw open failed");
                        }));
    }
    const std::string name = bc.mac.empty() ? bc.cipher : bc.cipher + " " + bc.mac;
    print_row(name, "seal", double(plain.size()), seal_ours, seal_raw);
    print_row(name, "open", double(plain.size()), open_ours, open_raw);
    std::fflush(stdout);
}

// ---- the parallel engine (--engine) ----

// One algorithm's packets for the engine figures: a batch of plaintext
// packets, sealed and opened in place again and again (open restores the
// plaintext, so nothing is copied between rounds), each time at the next
// positions, as on a connection.
class engine_case {
public:
    engine_case(const bench_case& bc, const options& opt, unsigned max_threads)
    {
        const direction_keys keys = keys_for(bc.cipher, bc.mac);
        auto made = make_packet_cipher(bc.cipher, bc.mac, keys, cipher_direction::seal);
        if (!made)
            die("cannot build " + bc.cipher);
        own_ = std::move(*made);
        for (unsigned i = 1; i < std::max(max_threads, 1u); ++i)
            clones_.push_back(own_->clone());
        const bytes plain = make_packet(*own_, opt.size);
        packet_size_ = plain.size();
        stride_ = packet_size_ + own_->tag_size();
        buffer_.resize(stride_ * opt.batch);
        for (std::size_t i = 0; i < opt.batch; ++i)
            std::memcpy(buffer_.data() + i * stride_, plain.data(), plain.size());
        positions_.resize(opt.batch);
    }

    std::size_t batch_bytes() const noexcept { return packet_size_ * positions_.size(); }

    // Seals then opens the batch: serially (engine == nullptr) or through the engine.
    void round(crypto_engine* engine)
    {
        for (auto& p : positions_) {
            p = next_;
            next_.seq += 1;
            next_.index += 1;
            next_.block_offset += own_->blocks_used(packet_size_);
        }
        if (engine == nullptr) {
            for (std::size_t i = 0; i < positions_.size(); ++i)
                seal(0, i);
            for (std::size_t i = 0; i < positions_.size(); ++i) {
                peek(i);
                open(0, i);
            }
            return;
        }
        auto seal_task = [this](unsigned slot, std::size_t i) { seal(slot, i); };
        auto open_task = [this](unsigned slot, std::size_t i) { open(slot, i); };
        engine->run(crypto_direction::seal, positions_.size(), batch_bytes(), seal_task);
        // A receiver learns each length only from the packet before it.
        for (std::size_t i = 0; i < positions_.size(); ++i)
            peek(i);
        engine->run(crypto_direction::open, positions_.size(), batch_bytes(), open_task);
    }

private:
    packet_cipher& slot(unsigned s) { return s == 0 ? *own_ : *clones_[s - 1]; }
    std::uint8_t* packet(std::size_t i) { return buffer_.data() + i * stride_; }
    void seal(unsigned s, std::size_t i)
    {
        slot(s).seal(positions_[i], {packet(i), packet_size_}, {packet(i) + packet_size_, own_->tag_size()});
    }
    void peek(std::size_t i)
    {
        if (own_->peek_length(positions_[i], {packet(i), own_->length_prefix_size()}) != packet_size_ - 4)
            die("engine: bad length");
    }
    void open(unsigned s, std::size_t i)
    {
        // As the transport does: the length is known from the peek.
        if (!slot(s).open_body(positions_[i], {packet(i), packet_size_}, {packet(i) + packet_size_, own_->tag_size()}))
            die("engine: open failed");
        store_u32(packet(i), std::uint32_t(packet_size_ - 4)); // plaintext again for the next round
    }

    std::unique_ptr<packet_cipher> own_;
    std::vector<std::unique_ptr<packet_cipher>> clones_;
    std::size_t packet_size_ = 0, stride_ = 0;
    bytes buffer_;
    std::vector<packet_position> positions_;
    packet_position next_{1000, 1000, 77};
};

// Prints one line per worker count, 0 .. max. The measurements of the
// worker counts are interleaved in rounds, so load from elsewhere falls on
// all of them alike; each figure is the sum of its rounds (opt.seconds in
// all).
void run_engine_case(const bench_case& bc, const options& opt)
{
    const unsigned max_workers = opt.max_workers;
    engine_case ec(bc, opt, max_workers);
    std::vector<std::unique_ptr<crypto_engine>> engines(max_workers + 1);
    for (unsigned n = 1; n <= max_workers; ++n)
        engines[n] = std::make_unique<crypto_engine>(n, true);
    std::vector<double> bytes_done(max_workers + 1), seconds(max_workers + 1);
    const double slice = opt.seconds / opt.rounds;
    // Warm-up: helper threads started, caches and clocks settled.
    for (unsigned n = 0; n <= max_workers; ++n)
        for (int i = 0; i < 4; ++i)
            ec.round(engines[n].get());
    for (int r = 0; r < opt.rounds; ++r) {
        for (unsigned n = 0; n <= max_workers; ++n) {
            const auto t0 = bench_clock::now();
            auto t = t0;
            std::uint64_t rounds = 0;
            do {
                ec.round(engines[n].get());
                ++rounds;
                t = bench_clock::now();
            } while (std::chrono::duration<double>(t - t0).count() < slice);
            bytes_done[n] += double(rounds) * double(ec.batch_bytes());
            seconds[n] += std::chrono::duration<double>(t - t0).count();
        }
    }
    const std::string name = bc.mac.empty() ? bc.cipher : bc.cipher + "+" + bc.mac;
    for (unsigned n = 0; n <= max_workers; ++n)
        std::printf("engine %s workers=%u MB/s=%.0f\n", name.c_str(), n, bytes_done[n] / seconds[n] / 1e6);
    std::fflush(stdout);
}

// Streaming EVP rates: one init, then updates of `size` bytes back to back.
void run_bulk(const options& opt)
{
    std::printf("\nEVP streaming rates (one init, %zu-byte updates, as `openssl speed -evp`):\n", opt.size);
    bytes buf(opt.size, 0x11);
    const double secs = opt.seconds / 2;
    auto cipher_rate = [&](const char* name, std::size_t key_len) {
        EVP_CIPHER* c = EVP_CIPHER_fetch(nullptr, name, nullptr);
        EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
        std::vector<std::uint8_t> key(key_len, 1), iv(16, 0);
        check(EVP_EncryptInit_ex2(ctx, c, key.data(), iv.data(), nullptr) == 1, name);
        int n = 0;
        const rate r =
            time_loop(secs, [&] { EVP_EncryptUpdate(ctx, buf.data(), &n, buf.data(), int(buf.size())); });
        EVP_CIPHER_CTX_free(ctx);
        EVP_CIPHER_free(c);
        std::printf("  %-16s %9.0f MB/s\n", name, r.ops_per_s * double(buf.size()) / 1e6);
    };
    auto mac_rate = [&](const char* label, const char* mac_name, const char* digest) {
        EVP_MAC* m = EVP_MAC_fetch(nullptr, mac_name, nullptr);
        EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(m);
        OSSL_PARAM params[] = {
            digest ? OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>(digest), 0)
                   : OSSL_PARAM_construct_end(),
            OSSL_PARAM_construct_end(),
        };
        const std::uint8_t key[32] = {3};
        check(EVP_MAC_init(ctx, key, 32, params) == 1, label);
        const rate r = time_loop(secs, [&] { EVP_MAC_update(ctx, buf.data(), buf.size()); });
        EVP_MAC_CTX_free(ctx);
        EVP_MAC_free(m);
        std::printf("  %-16s %9.0f MB/s\n", label, r.ops_per_s * double(buf.size()) / 1e6);
    };
    cipher_rate("ChaCha20", 32);
    mac_rate("Poly1305", "POLY1305", nullptr);
    cipher_rate("AES-128-GCM", 16);
    cipher_rate("AES-256-GCM", 32);
    cipher_rate("AES-128-CTR", 16);
    cipher_rate("AES-256-CTR", 32);
    mac_rate("HMAC-SHA2-256", "HMAC", "SHA2-256");
    mac_rate("HMAC-SHA2-512", "HMAC", "SHA2-512");
    mac_rate("HMAC-SHA1", "HMAC", "SHA1");
}

options parse(int argc, char** argv)
{
    options opt;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                die("missing value after " + a);
            return argv[++i];
        };
        if (a == "--seconds")
            opt.seconds = std::stod(value());
        else if (a == "--size")
            opt.size = std::stoul(value());
        else if (a == "--filter")
            opt.filter = value();
        else if (a == "--rounds")
            opt.rounds = std::stoi(value());
        else if (a == "--engine")
            opt.engine = true;
        else if (a == "--workers")
            opt.max_workers = static_cast<unsigned>(std::stoul(value()));
        else if (a == "--batch")
            opt.batch = std::stoul(value());
        else if (a == "-h" || a == "--help") {
            std::printf("usage: cipher_bench [--seconds N] [--size BYTES] [--filter TEXT] [--rounds N]\n"
                        "  --seconds  time per measurement (default 1)\n"
                        "  --size     encrypted bytes per packet, a multiple of 16 (default 32768)\n"
                        "  --filter   only algorithms whose name contains TEXT\n"
                        "  --rounds   interleaved rounds per measurement, best kept (default 5)\n"
                        "  --engine   the parallel engine: 'engine <cipher> workers=<n> MB/s=<x>' lines,\n"
                        "             seal then open, n = 0 (serial) .. --workers (default: the CPUs);\n"
                        "             --seconds is per figure, split into --rounds interleaved rounds\n"
                        "  --batch    --engine: packets per batch (default 16)\n");
            std::exit(0);
        } else
            die("unknown option " + a);
    }
    if (opt.seconds <= 0 || opt.size < 16 || opt.size % 16 != 0 || opt.size > (1u << 24) || opt.rounds < 1)
        die("bad --seconds, --size or --rounds");
    if (opt.max_workers == 0)
        opt.max_workers = std::max(1u, std::thread::hardware_concurrency());
    if (opt.batch < 1 || opt.batch > 4096 || opt.max_workers > crypto_pool::max_threads)
        die("bad --batch or --workers");
    return opt;
}

} // namespace

int main(int argc, char** argv)
{
    // Must precede every other OpenSSL call.
    const bool counting = CRYPTO_set_mem_functions(counting_malloc, counting_realloc, counting_free) == 1;
    const options opt = parse(argc, argv);
    if (opt.engine) {
        std::printf("# Longhaul crypto engine: %zu encrypted bytes per packet, %zu packets per batch, "
                    "%.2f s per figure in %d rounds; CPU: %s; %s\n",
                    opt.size, opt.batch, opt.seconds, opt.rounds, cpu_model().c_str(),
                    OpenSSL_version(OPENSSL_VERSION));
        for (const auto& bc : cases()) {
            const std::string name = bc.cipher + " " + bc.mac;
            if (!opt.filter.empty() && name.find(opt.filter) == std::string::npos)
                continue;
            run_engine_case(bc, opt);
        }
        return 0;
    }

    std::printf("Longhaul packet cipher benchmark: %zu encrypted bytes per packet, %.2f s per measurement "
                "(best of %d interleaved rounds)\n",
                opt.size, opt.seconds, opt.rounds);
    std::printf("CPU: %s; %s\n", cpu_model().c_str(), OpenSSL_version(OPENSSL_VERSION));
    if (!counting)
        std::printf("(OpenSSL allocation counting unavailable)\n");
    std::printf("MB/s = 10^6 bytes of packet (length field included) per second; overhead = extra time "
                "vs raw EVP\n\n");
    std::printf("%-46s %-4s %9s %9s %9s %7s %7s\n", "algorithm", "op", "longhaul", "raw EVP", "overhead",
                "allocs", "raw");
    std::printf("%-46s %-4s %9s %9s %9s %7s %7s\n", "", "", "MB/s", "MB/s", "", "/pkt", "/pkt");
    for (const auto& bc : cases()) {
        const std::string name = bc.cipher + " " + bc.mac;
        if (!opt.filter.empty() && name.find(opt.filter) == std::string::npos)
            continue;
        run_case(bc, opt);
    }
    if (opt.filter.empty())
        run_bulk(opt);
    return 0;
}
