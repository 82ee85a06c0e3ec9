#include "common/keys/krl.hpp"

#include "common/crypto/hash.hpp"
#include "common/wire.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace longhaul {

namespace {

// Section types (PROTOCOL.krl §1).
constexpr std::uint8_t section_certificates = 1;
constexpr std::uint8_t section_explicit_key = 2;
constexpr std::uint8_t section_fingerprint_sha1 = 3;
constexpr std::uint8_t section_signature = 4;
constexpr std::uint8_t section_fingerprint_sha256 = 5;
constexpr std::uint8_t section_extension = 255;

// Certificate subsection types (§2).
constexpr std::uint8_t cert_serial_list = 0x20;
constexpr std::uint8_t cert_serial_range = 0x21;
constexpr std::uint8_t cert_serial_bitmap = 0x22;
constexpr std::uint8_t cert_key_id = 0x23;
constexpr std::uint8_t cert_extension = 0x39;

// A bitmap is an mpint; OpenSSH caps those at 16384 bits (SSHBUF_MAX_BIGNUM).
constexpr std::size_t max_bitmap_bytes = 16384 / 8;

// Section bodies are bounded by the file, not by a packet size.
constexpr std::size_t any_length = std::numeric_limits<std::size_t>::max();

// sshbuf_get_cstring: a string with no NUL except, optionally, a final one
// (which is dropped).
std::string cstring(wire_reader& r)
{
    byte_span s = r.string(any_length);
    if (!r.ok())
        return {};
    const void* nul = s.empty() ? nullptr : std::memchr(s.data(), 0, s.size());
    if (nul != nullptr) {
        if (static_cast<const std::uint8_t*>(nul) != s.data() + s.size() - 1) {
            r.fail(errc::invalid_format);
            return {};
        }
        s = s.first(s.size() - 1);
    }
    return std::string(as_string_view(s));
}

// Number of significant bits of a big-endian magnitude without leading zeros.
std::uint64_t bit_length(byte_span magnitude) noexcept
{
    if (magnitude.empty())
        return 0;
    std::uint64_t bits = 8 * (magnitude.size() - 1);
    for (std::uint8_t top = magnitude[0]; top != 0; top >>= 1)
        ++bits;
    return bits;
}

bool bit_set(byte_span magnitude, std::uint64_t n) noexcept
{
    const std::uint64_t byte_from_end = n / 8;
    if (byte_from_end >= magnitude.size())
        return false;
    return (magnitude[magnitude.size() - 1 - byte_from_end] >> (n % 8)) & 1;
}

template <class T>
void sort_unique(std::vector<T>& v)
{
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}


// An extension section or certificate subsection (§2.5, §5): name,
// criticality, contents, nothing after. None are defined, so a critical
// one cannot be honoured and rejects the list; others are ignored.
result<void> extension(byte_span body)
{
    wire_reader r(body);
    (void)cstring(r);
    const bool critical = r.u8() != 0;
    (void)r.string(any_length);
    if (!r.ok() || r.remaining() != 0)
        return errc::invalid_format;
    if (critical)
        return errc::unsupported;
    return {};
}

// The CA key of a certificate section: a key OpenSSH can parse. Longhaul's
// own key types are validated and canonicalised; blobs of the types only
// OpenSSH parses are kept as they are (they can only ever match
// certificates signed by such a CA, which nothing here accepts).
result<bytes> ca_key_blob(byte_span blob)
{
    auto key = public_key::from_blob(blob);
    if (key)
        return key->blob();
    if (key.error() == errc::unsupported) {
        wire_reader r(blob);
        const auto name = r.text(64);
        if (r.ok() && openssh_only_key_type(name))
            return to_bytes(blob);
    }
    return errc::invalid_format;
}

class parser {
public:
    result<krl> run(byte_span file)
    {
        if (!starts_with_krl_magic(file))
            return errc::invalid_format;
        wire_reader r(file.subspan(krl_magic.size()));
        const std::uint32_t format = r.u32();
        if (r.ok() && format != krl_format_version)
            return errc::invalid_format;
        out_.version = r.u64();
        out_.generated_date = r.u64();
        out_.flags = r.u64();
        (void)r.string(any_length); // reserved
        out_.comment = cstring(r);
        if (!r.ok())
            return r.error();

        while (r.remaining() > 0) {
            const std::uint8_t type = r.u8();
            const byte_span body = r.string(any_length);
            if (!r.ok())
                return r.error();
            result<void> done;
            switch (type) {
            case section_certificates: done = certificates(body); break;
            case section_explicit_key: done = blobs(body, 0, [this](byte_span b) { out_.keys.push_back(to_bytes(b)); }); break;
            case section_fingerprint_sha1:
                done = blobs(body, 20, [this](byte_span b) { out_.sha1s.push_back(to_array<20>(b)); });
                break;
            case section_fingerprint_sha256:
                done = blobs(body, 32, [this](byte_span b) { out_.sha256s.push_back(to_array<32>(b)); });
                break;
            case section_extension: done = extension(body); break;
            case section_signature:
                // Two strings, the key (read as `body`) and the signature.
                // OpenSSH no longer verifies these (nor did it ever trust
                // them without configured CA keys, which sshd never passes).
                (void)r.string(any_length);
                if (!r.ok())
                    return r.error();
                break;
            default: return errc::invalid_format;
            }
            if (!done)
                return done.error();
        }

        sort_unique(out_.keys);
        sort_unique(out_.sha1s);
        sort_unique(out_.sha256s);
        for (auto& ca : out_.authorities) {
            merge_serial_ranges(ca.serial_ranges);
            sort_unique(ca.key_ids);
        }
        return std::move(out_);
    }

private:
    template <std::size_t N>
    static std::array<std::uint8_t, N> to_array(byte_span b)
    {
        std::array<std::uint8_t, N> a{};
        std::copy(b.begin(), b.end(), a.begin());
        return a;
    }

    // A section of strings, each `expected` bytes long unless that is 0.
    template <class Store>
    static result<void> blobs(byte_span body, std::size_t expected, Store store)
    {
        wire_reader r(body);
        while (r.remaining() > 0) {
            const byte_span b = r.string(any_length);
            if (!r.ok())
                return r.error();
            if (expected != 0 && b.size() != expected)
                return errc::invalid_format;
            store(b);
        }
        return {};
    }

    // The entry for the CA of the section being read, created on its first
    // revocation (so that a CA with nothing revoked is not listed, as in
    // OpenSSH) and merged with earlier sections naming the same CA.
    krl_certificate_authority& authority()
    {
        if (current_ == npos) {
            const auto it = std::find_if(out_.authorities.begin(), out_.authorities.end(),
                                         [this](const auto& a) { return a.ca_key == ca_key_; });
            current_ = static_cast<std::size_t>(it - out_.authorities.begin());
            if (current_ == out_.authorities.size()) {
                out_.authorities.push_back({});
                out_.authorities.back().ca_key = ca_key_;
            }
        }
        return out_.authorities[current_];
    }

    result<void> certificates(byte_span body)
    {
        wire_reader r(body);
        const byte_span ca = r.string(any_length);
        (void)r.string(any_length); // reserved
        if (!r.ok())
            return r.error();
        ca_key_.clear();
        current_ = npos;
        if (!ca.empty()) {
            auto blob = ca_key_blob(ca);
            if (!blob)
                return blob.error();
            ca_key_ = std::move(*blob);
        }
        while (r.remaining() > 0) {
            const std::uint8_t type = r.u8();
            const byte_span sub = r.string(any_length);
            if (!r.ok())
                return r.error();
            auto done = type == cert_extension ? extension(sub) : subsection(type, sub);
            if (!done)
                return done.error();
        }
        return {};
    }

    result<void> subsection(std::uint8_t type, byte_span body)
    {
        wire_reader r(body);
        switch (type) {
        case cert_serial_list:
            while (r.remaining() > 0) {
                const std::uint64_t serial = r.u64();
                if (!r.ok())
                    return r.error();
                if (serial == 0)
                    return errc::invalid_argument;
                authority().serial_ranges.push_back({serial, serial});
            }
            break;
        case cert_serial_range: {
            const std::uint64_t lo = r.u64();
            const std::uint64_t hi = r.u64();
            if (!r.ok())
                return r.error();
            if (lo == 0 || lo > hi)
                return errc::invalid_argument;
            authority().serial_ranges.push_back({lo, hi});
            break;
        }
        case cert_serial_bitmap: {
            const std::uint64_t offset = r.u64();
            const byte_span bits = r.mpint(max_bitmap_bytes);
            if (!r.ok())
                return r.error();
            const std::uint64_t n = bit_length(bits);
            // Serials offset .. offset+n-1 must not wrap past 2^64 - 1, and
            // serial 0 (bit 0 at offset 0) cannot be revoked.
            if (n > 0 && offset != 0 && n - 1 > std::numeric_limits<std::uint64_t>::max() - offset)
                return errc::invalid_format;
            if (offset == 0 && bit_set(bits, 0))
                return errc::invalid_argument;
            if (n > 0)
                authority().serial_bitmaps.push_back({offset, to_bytes(bits)});
            break;
        }
        case cert_key_id:
            while (r.remaining() > 0) {
                std::string id = cstring(r);
                if (!r.ok())
                    return r.error();
                authority().key_ids.push_back(std::move(id));
            }
            break;
        default: return errc::invalid_format;
        }
        if (r.remaining() != 0)
            return errc::invalid_format;
        return {};
    }

    static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

    krl out_;
    bytes ca_key_;           // of the certificate section being read
    std::size_t current_ = npos; // its index in out_.authorities, once known
};

} // namespace

bool starts_with_krl_magic(byte_span file) noexcept
{
    return file.size() >= krl_magic.size() && as_string_view(file.first(krl_magic.size())) == krl_magic;
}

bool krl_certificate_authority::serial_revoked(std::uint64_t serial) const noexcept
{
    if (serial == 0)
        return false;
    auto it = std::upper_bound(serial_ranges.begin(), serial_ranges.end(), serial,
                               [](std::uint64_t s, const krl_serial_range& r) { return s < r.lo; });
    if (it != serial_ranges.begin() && std::prev(it)->hi >= serial)
        return true;
    for (const auto& b : serial_bitmaps)
        if (serial >= b.offset && bit_set(b.bits, serial - b.offset))
            return true;
    return false;
}

bool krl_certificate_authority::key_id_revoked(std::string_view key_id) const noexcept
{
    return std::binary_search(key_ids.begin(), key_ids.end(), key_id,
                              [](std::string_view a, std::string_view b) { return a < b; });
}

bool krl::revokes_serial_or_id(const certificate& cert) const
{
    return std::any_of(authorities.begin(), authorities.end(), [&](const krl_certificate_authority& ca) {
        return (ca.ca_key.empty() || ca.ca_key == cert.signature_key().blob()) &&
               (ca.key_id_revoked(cert.key_id()) || ca.serial_revoked(cert.serial()));
    });
}

bool krl::revokes(const public_key& key) const
{
    const bytes& blob = key.blob();
    if (!sha1s.empty()) {
        const bytes d = digest(hash_alg::sha1, blob);
        sha1_digest a{};
        std::copy(d.begin(), d.end(), a.begin());
        if (std::binary_search(sha1s.begin(), sha1s.end(), a))
            return true;
    }
    if (!sha256s.empty()) {
        const bytes d = digest(hash_alg::sha256, blob);
        sha256_digest a{};
        std::copy(d.begin(), d.end(), a.begin());
        if (std::binary_search(sha256s.begin(), sha256s.end(), a))
            return true;
    }
    return std::binary_search(keys.begin(), keys.end(), blob);
}

void merge_serial_ranges(std::vector<krl_serial_range>& v)
{
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.lo < b.lo; });
    std::vector<krl_serial_range> out;
    for (const auto& r : v) {
        if (!out.empty() && (out.back().hi == std::numeric_limits<std::uint64_t>::max() || r.lo <= out.back().hi + 1))
            out.back().hi = std::max(out.back().hi, r.hi);
        else
            out.push_back(r);
    }
    v = std::move(out);
}

result<krl> parse_krl(byte_span file) { return parser().run(file); }

bool openssh_only_key_type(std::string_view name) noexcept
{
    static constexpr std::string_view names[] = {
        "ssh-dss",
        "sk-ssh-ed25519@openssh.com",
        "sk-ecdsa-sha2-nistp256@openssh.com",
        "ssh-xmss@openssh.com",
        "ssh-ed25519-cert-v01@openssh.com",
        "ecdsa-sha2-nistp256-cert-v01@openssh.com",
        "ecdsa-sha2-nistp384-cert-v01@openssh.com",
        "ecdsa-sha2-nistp521-cert-v01@openssh.com",
        "ssh-rsa-cert-v01@openssh.com",
        "ssh-dss-cert-v01@openssh.com",
        "sk-ssh-ed25519-cert-v01@openssh.com",
        "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
        "ssh-xmss-cert-v01@openssh.com",
    };
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

} // namespace longhaul
