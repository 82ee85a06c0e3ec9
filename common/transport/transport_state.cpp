#include "common/transport/transport_state.hpp"

#include "common/crypto/compression.hpp"
#include "common/transport/host_key_algorithms.hpp"
#include "common/transport/version.hpp"
#include "common/wire.hpp"

namespace longhaul {

namespace {

// Names the encoding with its purpose, so that bytes meant for something
// else on the same channel are never taken for a state.
constexpr std::string_view state_tag = "longhaul-transport-state";
// Every algorithm name this build knows is far shorter.
constexpr std::size_t max_algorithm_name = 64;

result<void> validate_compression(std::string_view name, bool active, bool authenticated)
{
    const compression_info* c = find_compression(name);
    if (c == nullptr)
        return errc::unsupported;
    // The core starts "zlib" at NEWKEYS and zlib@openssh.com at
    // authentication: a state saying otherwise was not made by it.
    const bool expected = name != "none" && (!c->delayed || authenticated);
    if (active != expected)
        return errc::invalid_argument;
    return {};
}

result<void> validate_direction(const transport_direction_state& d, std::string_view cipher, std::string_view mac,
                                 std::string_view compression, bool authenticated)
{
    for (const secret_bytes* k : {&d.keys.iv, &d.keys.enc_key, &d.keys.mac_key})
        if (k->size() > max_state_key_size)
            return errc::too_large;
    // "none" is never negotiated by sshd or ssh, and a hand-off must not
    // turn a protected connection into a clear one.
    const cipher_info* ci = cipher == "none" ? nullptr : find_cipher(cipher);
    if (ci == nullptr)
        return errc::unsupported;
    if (ci->aead) {
        if (!mac.empty() || !d.keys.mac_key.empty())
            return errc::invalid_argument;
    } else {
        const mac_info* mi = mac == "none" || mac.empty() ? nullptr : find_mac(mac);
        if (mi == nullptr)
            return errc::unsupported;
        if (d.keys.mac_key.size() != mi->key_size)
            return errc::invalid_argument;
    }
    if (d.keys.iv.size() != ci->iv_size || d.keys.enc_key.size() != ci->key_size)
        return errc::invalid_argument;
    return validate_compression(compression, d.compression, authenticated);
}

void write_direction(wire_writer& w, const transport_direction_state& d)
{
    w.string(d.keys.iv.span()).string(d.keys.enc_key.span()).string(d.keys.mac_key.span());
    w.u32(d.position.seq).u64(d.position.index).u64(d.position.block_offset);
    w.u64(d.usage.packets).u64(d.usage.bytes);
    w.boolean(d.compression);
}

// Strict about booleans: a byte that is neither 0 nor 1 was not written here.
bool read_flag(wire_reader& r)
{
    const std::uint8_t b = r.u8();
    if (b > 1)
        r.fail(errc::malformed);
    return b == 1;
}

void read_direction(wire_reader& r, transport_direction_state& d)
{
    d.keys.iv = secret_bytes(r.string(max_state_key_size));
    d.keys.enc_key = secret_bytes(r.string(max_state_key_size));
    d.keys.mac_key = secret_bytes(r.string(max_state_key_size));
    d.position.seq = r.u32();
    d.position.index = r.u64();
    d.position.block_offset = r.u64();
    d.usage.packets = r.u64();
    d.usage.bytes = r.u64();
    d.compression = read_flag(r);
}

} // namespace

result<void> validate_transport_state(const transport_state& s)
{
    if (s.role != transport_role::client && s.role != transport_role::server)
        return errc::invalid_argument;
    for (const std::string* id : {&s.local_identification, &s.peer_identification}) {
        if (id->size() > max_identification_line)
            return errc::too_large;
        if (id->find_first_of("\r\n", 0) != std::string::npos || id->find('\0') != std::string::npos)
            return errc::invalid_argument;
        if (!parse_identification(*id))
            return errc::invalid_argument;
    }
    const auto& a = s.algorithms;
    if (find_kex_method(a.kex) == nullptr)
        return errc::unsupported;
    // A certificate algorithm: the state holds the key it certifies.
    auto host_type = host_key_type_for_algorithm(a.host_key);
    if (!host_type)
        return errc::unsupported;
    if (!s.host_key || s.host_key->empty() || s.host_key->type() != *host_type)
        return errc::invalid_argument;
    if (s.host_key->blob().size() > max_state_host_key_blob)
        return errc::too_large;
    const bool client = s.role == transport_role::client;
    if (auto v = validate_direction(s.out, client ? a.cipher_c2s : a.cipher_s2c, client ? a.mac_c2s : a.mac_s2c,
                                    client ? a.compression_c2s : a.compression_s2c, s.authenticated);
        !v)
        return v;
    if (auto v = validate_direction(s.in, client ? a.cipher_s2c : a.cipher_c2s, client ? a.mac_s2c : a.mac_c2s,
                                    client ? a.compression_s2c : a.compression_c2s, s.authenticated);
        !v)
        return v;
    if (s.session_id.size() > max_state_session_id)
        return errc::too_large;
    if (s.session_id.empty())
        return errc::invalid_argument;
    if (s.peer_extensions.size() > max_state_extensions)
        return errc::too_large;
    std::size_t ext_bytes = 0;
    for (const auto& [name, value] : s.peer_extensions) {
        if (name.size() > max_state_extension_name || value.size() > max_state_extension_value)
            return errc::too_large;
        ext_bytes += name.size() + value.size();
    }
    if (ext_bytes > max_state_extension_bytes)
        return errc::too_large;
    // A server takes one EXT_INFO, a client two.
    if (s.ext_info_received > (client ? 2u : 1u))
        return errc::invalid_argument;
    if (client && s.peer_wants_ext_info)
        return errc::invalid_argument;
    if (s.unread_input.size() > max_transport_input)
        return errc::too_large;
    return {};
}

bytes encode_transport_state(const transport_state& s)
{
    // Reserved up front so that growing never leaves a copy of the keys in
    // freed memory.
    std::size_t size = 512 + s.local_identification.size() + s.peer_identification.size() + s.session_id.size() +
                       s.unread_input.size() + 6 * (4 + max_state_key_size);
    for (const std::string* n : {&s.algorithms.kex, &s.algorithms.host_key, &s.algorithms.cipher_c2s,
                                 &s.algorithms.cipher_s2c, &s.algorithms.mac_c2s, &s.algorithms.mac_s2c,
                                 &s.algorithms.compression_c2s, &s.algorithms.compression_s2c})
        size += 4 + n->size();
    for (const auto& [name, value] : s.peer_extensions)
        size += 8 + name.size() + value.size();
    if (s.host_key)
        size += 4 + s.host_key->blob().size();

    bytes out;
    out.reserve(size);
    wire_writer w(out);
    w.string(state_tag).u32(transport_state_version);
    w.u8(s.role == transport_role::client ? 0 : 1);
    w.string(s.local_identification).string(s.peer_identification);
    const auto& a = s.algorithms;
    w.string(a.kex).string(a.host_key).string(a.cipher_c2s).string(a.cipher_s2c).string(a.mac_c2s).string(a.mac_s2c);
    w.string(a.compression_c2s).string(a.compression_s2c);
    w.string(s.session_id);
    w.boolean(s.strict_kex).boolean(s.peer_wants_ext_info).boolean(s.authenticated);
    w.u32(static_cast<std::uint32_t>(s.peer_extensions.size()));
    for (const auto& [name, value] : s.peer_extensions)
        w.string(name).string(value);
    w.u32(s.ext_info_received);
    w.string(s.host_key ? byte_span(s.host_key->blob()) : byte_span());
    write_direction(w, s.out);
    write_direction(w, s.in);
    w.u64(s.stats.bytes_in).u64(s.stats.bytes_out).u64(s.stats.packets_in).u64(s.stats.packets_out);
    w.u32(s.stats.key_exchanges);
    w.string(s.unread_input);
    return out;
}

result<transport_state> decode_transport_state(byte_span encoded)
{
    wire_reader r(encoded);
    if (r.text(state_tag.size()) != state_tag || !r.ok())
        return r.ok() ? errc::malformed : r.error();
    if (r.u32() != transport_state_version)
        return r.ok() ? errc::bad_version : r.error();

    transport_state s;
    const std::uint8_t role = r.u8();
    if (role > 1)
        r.fail(errc::malformed);
    s.role = role == 0 ? transport_role::client : transport_role::server;
    s.local_identification = std::string(r.text(max_identification_line));
    s.peer_identification = std::string(r.text(max_identification_line));
    auto& a = s.algorithms;
    for (std::string* n : {&a.kex, &a.host_key, &a.cipher_c2s, &a.cipher_s2c, &a.mac_c2s, &a.mac_s2c,
                           &a.compression_c2s, &a.compression_s2c})
        *n = std::string(r.text(max_algorithm_name));
    s.session_id = to_bytes(r.string(max_state_session_id));
    s.strict_kex = read_flag(r);
    s.peer_wants_ext_info = read_flag(r);
    s.authenticated = read_flag(r);
    const std::uint32_t n_ext = r.u32();
    if (n_ext > max_state_extensions)
        r.fail(errc::too_large);
    std::size_t ext_bytes = 0;
    for (std::uint32_t i = 0; i < n_ext && r.ok(); ++i) {
        auto name = r.text(max_state_extension_name);
        auto value = r.text(max_state_extension_value);
        ext_bytes += name.size() + value.size();
        if (ext_bytes > max_state_extension_bytes)
            r.fail(errc::too_large);
        // A map built from EXT_INFO has each name once.
        if (r.ok() && !s.peer_extensions.emplace(std::string(name), std::string(value)).second)
            r.fail(errc::malformed);
    }
    s.ext_info_received = r.u32();
    const byte_span host_blob = r.string(max_state_host_key_blob);
    read_direction(r, s.out);
    read_direction(r, s.in);
    s.stats.bytes_in = r.u64();
    s.stats.bytes_out = r.u64();
    s.stats.packets_in = r.u64();
    s.stats.packets_out = r.u64();
    s.stats.key_exchanges = r.u32();
    s.unread_input = to_bytes(r.string(max_transport_input));
    if (auto f = r.finish(); !f)
        return f.error();
    if (!host_blob.empty()) {
        auto key = public_key::from_blob(host_blob);
        if (!key)
            return errc::invalid_argument;
        s.host_key = std::move(*key);
    }
    if (auto v = validate_transport_state(s); !v)
        return v.error();
    return s;
}

} // namespace longhaul
