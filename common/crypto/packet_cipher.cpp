// Algorithm tables, the factory, and the "none" protection used before the
// first NEWKEYS.
#include "common/crypto/packet_cipher.hpp"

#include "common/crypto/packet_cipher_impl.hpp"
#include "common/wire.hpp"

#include <array>
#include <exception>
#include <new>

namespace longhaul {

namespace {

// Preference order is OpenSSH 9.x's default; "none" sits last and is left out
// of the supported lists so that it is never offered by default.
constexpr std::array<cipher_info, 7> cipher_table{{
    {"chacha20-poly1305@openssh.com", 64, 0, 8, 16, true},
    {"aes128-ctr", 16, 16, 16, 0, false},
    {"aes192-ctr", 24, 16, 16, 0, false},
    {"aes256-ctr", 32, 16, 16, 0, false},
    {"aes128-gcm@openssh.com", 16, 12, 16, 16, true},
    {"aes256-gcm@openssh.com", 32, 12, 16, 16, true},
    {"none", 0, 0, 8, 0, false},
}};

// UMAC (umac.hpp) keys are AES-128 keys; its tag is 8 or 16 bytes.
constexpr std::array<mac_info, 11> mac_table{{
    {"umac-64-etm@openssh.com", 16, 8, true},
    {"umac-128-etm@openssh.com", 16, 16, true},
    {"hmac-sha2-256-etm@openssh.com", 32, 32, true},
    {"hmac-sha2-512-etm@openssh.com", 64, 64, true},
    {"hmac-sha1-etm@openssh.com", 20, 20, true},
    {"umac-64@openssh.com", 16, 8, false},
    {"umac-128@openssh.com", 16, 16, false},
    {"hmac-sha2-256", 32, 32, false},
    {"hmac-sha2-512", 64, 64, false},
    {"hmac-sha1", 20, 20, false},
    {"none", 0, 0, false},
}};

class null_packet_cipher final : public packet_cipher {
public:
    std::size_t length_prefix_size() const noexcept override { return 4; }
    std::size_t block_size() const noexcept override { return 8; }
    std::size_t tag_size() const noexcept override { return 0; }
    bool length_excluded_from_padding() const noexcept override { return false; }
    std::uint64_t blocks_used(std::size_t) const noexcept override { return 0; }
    std::uint32_t peek_length(const packet_position&, byte_span prefix) override
    {
        return prefix.size() < 4 ? 0 : load_u32(prefix.data());
    }
    void seal(const packet_position&, mutable_byte_span packet, mutable_byte_span) override
    {
        detail::check_seal_args(packet.size(), 4, 0, 0);
    }
    result<void> open(const packet_position&, mutable_byte_span packet, byte_span tag) override
    {
        if (packet.size() < 4 || !tag.empty())
            return errc::invalid_argument;
        return {};
    }
    std::unique_ptr<packet_cipher> clone() const override { return std::make_unique<null_packet_cipher>(); }
};

} // namespace

const cipher_info* find_cipher(std::string_view name) noexcept
{
    for (const auto& c : cipher_table)
        if (c.name == name)
            return &c;
    return nullptr;
}

const mac_info* find_mac(std::string_view name) noexcept
{
    for (const auto& m : mac_table)
        if (m.name == name)
            return &m;
    return nullptr;
}

const std::vector<std::string_view>& supported_ciphers()
{
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> v;
        for (const auto& c : cipher_table)
            if (c.name != "none")
                v.push_back(c.name);
        return v;
    }();
    return names;
}

const std::vector<std::string_view>& supported_macs()
{
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> v;
        for (const auto& m : mac_table)
            if (m.name != "none")
                v.push_back(m.name);
        return v;
    }();
    return names;
}

result<std::unique_ptr<packet_cipher>> make_packet_cipher(std::string_view cipher, std::string_view mac,
                                                          const direction_keys& keys, cipher_direction)
{
    // Every instance can both seal and open (the EVP contexts are keyed for
    // either use), so the direction only documents intent.
    const cipher_info* ci = find_cipher(cipher);
    if (ci == nullptr)
        return errc::unsupported;
    if (keys.enc_key.size() != ci->key_size || keys.iv.size() != ci->iv_size)
        return errc::invalid_argument;
    try {
        if (ci->aead) {
            if (ci->name == "chacha20-poly1305@openssh.com")
                return detail::make_chacha20_poly1305(keys.enc_key);
            return detail::make_aes_gcm(keys.enc_key, keys.iv);
        }
        const mac_info* mi = find_mac(mac);
        if (mi == nullptr)
            return errc::unsupported;
        if (keys.mac_key.size() != mi->key_size)
            return errc::invalid_argument;
        if (ci->name == "none" && mi->name == "none")
            return make_null_packet_cipher();
        return detail::make_cipher_mac(*ci, *mi, keys);
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception&) {
        // OpenSSL could not set the algorithm up (a FIPS-restricted build, a
        // missing provider): report it instead of unwinding into the core.
        return errc::crypto_error;
    }
}

std::unique_ptr<packet_cipher> make_null_packet_cipher() { return std::make_unique<null_packet_cipher>(); }

} // namespace longhaul
