// The field codec behind every SFTP message struct: each struct lists its
// fields after the request id (fields()), and one template encodes and
// decodes them all, so the 30-odd messages cannot drift from each other in
// how a string, a handle or an ATTRS is read. Internal to common/sftp.
#pragma once

#include "common/sftp/sftp_attrs.hpp"
#include "common/wire.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace longhaul::sftp {

// One entry of a NAME reply.
struct name_entry {
    std::string filename;
    std::string longname;
    attrs attributes;
    friend bool operator==(const name_entry&, const name_entry&) = default;
};

// users-groups-by-id@openssh.com carries a list of uint32 ids packed in a
// string, and replies with names packed likewise.
struct id_list {
    std::vector<std::uint32_t> ids;
    friend bool operator==(const id_list&, const id_list&) = default;
};
struct packed_names {
    std::vector<std::string> names;
    friend bool operator==(const packed_names&, const packed_names&) = default;
};

// An (extension-name, extension-data) pair of INIT or VERSION.
struct extension_pair {
    std::string name;
    std::string data;
    friend bool operator==(const extension_pair&, const extension_pair&) = default;
};

namespace detail {

// Strings are bounded by the enclosing packet (the framing layer's limit),
// not by the reader's default cap.
inline constexpr std::size_t unbounded = std::numeric_limits<std::size_t>::max();

inline void put(wire_writer& w, std::uint32_t v) { w.u32(v); }
inline void put(wire_writer& w, std::uint64_t v) { w.u64(v); }
inline void put(wire_writer& w, const std::string& v) { w.string(v); }
inline void put(wire_writer& w, const bytes& v) { w.string(byte_span(v)); }
inline void put(wire_writer& w, byte_span v) { w.string(v); }
inline void put(wire_writer& w, const attrs& v) { v.encode(w); }
void put(wire_writer& w, const std::vector<name_entry>& v);
void put(wire_writer& w, const id_list& v);
void put(wire_writer& w, const packed_names& v);

inline void get(wire_reader& r, std::uint32_t& v) { v = r.u32(); }
inline void get(wire_reader& r, std::uint64_t& v) { v = r.u64(); }
// Paths and names: OpenSSH reads them as C strings, so an embedded NUL is
// malformed rather than silently truncating the path.
void get(wire_reader& r, std::string& v);
// Handles: opaque bytes.
void get(wire_reader& r, bytes& v);
// Data: a view into the packet.
inline void get(wire_reader& r, byte_span& v) { v = r.string(unbounded); }
inline void get(wire_reader& r, attrs& v) { v = attrs::decode(r); }
void get(wire_reader& r, std::vector<name_entry>& v);
void get(wire_reader& r, id_list& v);
void get(wire_reader& r, packed_names& v);

void put_extensions(wire_writer& w, const std::vector<extension_pair>& v);
void get_extensions(wire_reader& r, std::vector<extension_pair>& v);

template <class M>
concept has_ext_name = requires { M::ext_name; };

} // namespace detail

namespace detail {

// The packet of a message with a request id: uint32 length, type, id, the
// extension name for extension messages, then the fields.
template <class M>
void encode_message(const M& m, bytes& out)
{
    wire_writer w(out);
    const auto mark = w.begin_string();
    w.u8(M::type).u32(m.id);
    if constexpr (has_ext_name<M>)
        w.string(M::ext_name);
    std::apply([&](const auto&... f) { (put(w, f), ...); }, m.fields());
    w.end_string(mark);
}

// From the payload (what follows the type byte); rejects truncation,
// malformed fields and trailing bytes.
template <class M>
result<M> decode_message(byte_span payload)
{
    wire_reader r(payload);
    M m;
    m.id = r.u32();
    if constexpr (has_ext_name<M>) {
        const auto name = r.text(unbounded);
        if (r.ok() && name != M::ext_name)
            return errc::invalid_argument;
    }
    std::apply([&](auto&... f) { (get(r, f), ...); }, m.fields());
    if (auto done = r.finish(); !done)
        return done.error();
    return m;
}

} // namespace detail

// Declares, in a message struct with a request id, its fields after the id
// in wire order and the struct's encode/decode:
//   encode_to(out) appends the whole packet; encode() returns it;
//   decode(payload) parses what follows the type byte.
// The structs stay aggregates, so tests and callers can use designated
// initializers. Those without spans also declare a defaulted operator==.
#define LONGHAUL_SFTP_MESSAGE(M, ...)                                                                                  \
    auto fields() { return std::tie(__VA_ARGS__); }                                                                    \
    auto fields() const { return std::tie(__VA_ARGS__); }                                                              \
    void encode_to(bytes& out) const { ::longhaul::sftp::detail::encode_message(*this, out); }                         \
    bytes encode() const                                                                                               \
    {                                                                                                                  \
        bytes out;                                                                                                     \
        encode_to(out);                                                                                                \
        return out;                                                                                                    \
    }                                                                                                                  \
    static result<M> decode(byte_span payload) { return ::longhaul::sftp::detail::decode_message<M>(payload); }

} // namespace longhaul::sftp
