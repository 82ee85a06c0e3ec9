// The hand-written codecs (INIT, VERSION, STATUS, HANDLE, unknown extended
// messages), the field codec, and the decoders from a packet to a request
// or reply. The rest of the message structs use the generic codec in
// detail/sftp_fields.hpp.
#include "common/sftp/sftp_replies.hpp"
#include "common/sftp/sftp_requests.hpp"

#include <array>
#include <cstring>

namespace longhaul::sftp {

std::string_view status_message(std::uint32_t c) noexcept
{
    // OpenSSH's sftp-server words, index by code; past the end "Unknown error".
    static constexpr std::array<std::string_view, 9> messages = {
        "Success", "End of file", "No such file", "Permission denied", "Failure", "Bad message",
        "No connection", "Connection lost", "Operation unsupported",
    };
    return c < messages.size() ? messages[c] : "Unknown error";
}

std::string_view status_message(status_code c) noexcept { return status_message(static_cast<std::uint32_t>(c)); }

namespace detail {

void put(wire_writer& w, const std::vector<name_entry>& v)
{
    w.u32(static_cast<std::uint32_t>(v.size()));
    for (const auto& e : v) {
        w.string(e.filename).string(e.longname);
        e.attributes.encode(w);
    }
}

void put(wire_writer& w, const id_list& v)
{
    const auto mark = w.begin_string();
    for (auto id : v.ids)
        w.u32(id);
    w.end_string(mark);
}

void put(wire_writer& w, const packed_names& v)
{
    const auto mark = w.begin_string();
    for (const auto& n : v.names)
        w.string(n);
    w.end_string(mark);
}

void get(wire_reader& r, std::string& v)
{
    const auto s = r.text(unbounded);
    if (!r.ok())
        return;
    if (s.find('\0') != std::string_view::npos) {
        r.fail(errc::malformed);
        return;
    }
    v.assign(s);
}

void get(wire_reader& r, bytes& v)
{
    const auto s = r.string(unbounded);
    v.assign(s.begin(), s.end());
}

void get(wire_reader& r, std::vector<name_entry>& v)
{
    const std::uint32_t count = r.u32();
    // No reserve from the peer's count: each entry takes at least 12 bytes,
    // so a lying count runs out of packet long before memory.
    for (std::uint32_t i = 0; i < count && r.ok(); ++i) {
        name_entry e;
        get(r, e.filename);
        get(r, e.longname);
        e.attributes = attrs::decode(r);
        if (r.ok())
            v.push_back(std::move(e));
    }
}

void get(wire_reader& r, id_list& v)
{
    const auto s = r.string(unbounded);
    if (!r.ok())
        return;
    if (s.size() % 4 != 0) {
        r.fail(errc::malformed);
        return;
    }
    v.ids.reserve(s.size() / 4); // bounded by the packet
    for (std::size_t i = 0; i < s.size(); i += 4)
        v.ids.push_back(load_u32(s.data() + i));
}

void get(wire_reader& r, packed_names& v)
{
    const auto s = r.string(unbounded);
    if (!r.ok())
        return;
    wire_reader inner(s);
    while (inner.ok() && inner.remaining() > 0) {
        std::string n;
        get(inner, n);
        if (inner.ok())
            v.names.push_back(std::move(n));
    }
    if (!inner.ok())
        r.fail(inner.error());
}

void put_extensions(wire_writer& w, const std::vector<extension_pair>& v)
{
    for (const auto& e : v)
        w.string(e.name).string(e.data);
}

void get_extensions(wire_reader& r, std::vector<extension_pair>& v)
{
    while (r.ok() && r.remaining() > 0) {
        if (v.size() == max_version_extensions) {
            r.fail(errc::too_large);
            return;
        }
        extension_pair e;
        get(r, e.name);
        e.data = std::string(r.text(unbounded));
        if (r.ok())
            v.push_back(std::move(e));
    }
}

} // namespace detail

namespace {

template <class M>
bytes encode_of(const M& m)
{
    bytes out;
    m.encode_to(out);
    return out;
}

} // namespace

// --- INIT / VERSION ---------------------------------------------------------

void init_request::encode_to(bytes& out) const
{
    wire_writer w(out);
    const auto mark = w.begin_string();
    w.u8(type).u32(version);
    detail::put_extensions(w, extensions);
    w.end_string(mark);
}
bytes init_request::encode() const { return encode_of(*this); }

result<init_request> init_request::decode(byte_span payload)
{
    wire_reader r(payload);
    init_request m;
    m.version = r.u32();
    detail::get_extensions(r, m.extensions);
    if (auto done = r.finish(); !done)
        return done.error();
    return m;
}

void version_reply::encode_to(bytes& out) const
{
    wire_writer w(out);
    const auto mark = w.begin_string();
    w.u8(type).u32(version);
    detail::put_extensions(w, extensions);
    w.end_string(mark);
}
bytes version_reply::encode() const { return encode_of(*this); }

result<version_reply> version_reply::decode(byte_span payload)
{
    wire_reader r(payload);
    version_reply m;
    m.version = r.u32();
    detail::get_extensions(r, m.extensions);
    if (auto done = r.finish(); !done)
        return done.error();
    return m;
}

const std::string* version_reply::find(std::string_view name) const noexcept
{
    for (const auto& e : extensions)
        if (e.name == name)
            return &e.data;
    return nullptr;
}

// --- STATUS / HANDLE / DATA header -------------------------------------------

void status_reply::encode_to(bytes& out) const
{
    wire_writer w(out);
    const auto mark = w.begin_string();
    w.u8(type).u32(id).u32(code).string(message).string(language);
    w.end_string(mark);
}
bytes status_reply::encode() const { return encode_of(*this); }

result<status_reply> status_reply::decode(byte_span payload)
{
    wire_reader r(payload);
    status_reply m;
    m.id = r.u32();
    m.code = r.u32();
    if (r.ok() && r.remaining() > 0) {
        detail::get(r, m.message);
        detail::get(r, m.language);
    }
    if (auto done = r.finish(); !done)
        return done.error();
    return m;
}

void handle_reply::encode_to(bytes& out) const
{
    wire_writer w(out);
    const auto mark = w.begin_string();
    w.u8(type).u32(id).string(byte_span(handle));
    w.end_string(mark);
}
bytes handle_reply::encode() const { return encode_of(*this); }

result<handle_reply> handle_reply::decode(byte_span payload)
{
    wire_reader r(payload);
    handle_reply m;
    m.id = r.u32();
    const auto h = r.string(max_handle_length);
    if (auto done = r.finish(); !done)
        return done.error();
    m.handle.assign(h.begin(), h.end());
    return m;
}

void write_data_reply_header(std::uint8_t* out, std::uint32_t id, std::uint32_t data_length) noexcept
{
    store_u32(out, 1 + 4 + 4 + data_length);
    out[4] = fxp::data;
    store_u32(out + 5, id);
    store_u32(out + 9, data_length);
}

// --- unknown extensions ----------------------------------------------------

void extended_request::encode_to(bytes& out) const
{
    wire_writer w(out);
    const auto mark = w.begin_string();
    w.u8(type).u32(id).string(name).raw(data);
    w.end_string(mark);
}
bytes extended_request::encode() const { return encode_of(*this); }

result<extended_request> extended_request::decode(byte_span payload)
{
    wire_reader r(payload);
    extended_request m;
    m.id = r.u32();
    detail::get(r, m.name);
    m.data = r.rest();
    if (!r.ok())
        return r.error();
    return m;
}

void extended_reply::encode_to(bytes& out) const
{
    wire_writer w(out);
    const auto mark = w.begin_string();
    w.u8(type).u32(id).raw(data);
    w.end_string(mark);
}
bytes extended_reply::encode() const { return encode_of(*this); }

result<extended_reply> extended_reply::decode(byte_span payload)
{
    wire_reader r(payload);
    extended_reply m;
    m.id = r.u32();
    m.data = r.rest();
    if (!r.ok())
        return r.error();
    return m;
}

// --- check-file ----------------------------------------------------------

void check_file_reply::encode_to(bytes& out) const
{
    wire_writer w(out);
    const auto mark = w.begin_string();
    w.u8(type).u32(id).string(ext::check_file_reply).string(algorithm).raw(byte_span(hashes));
    w.end_string(mark);
}
bytes check_file_reply::encode() const { return encode_of(*this); }

result<check_file_reply> check_file_reply::decode(byte_span payload)
{
    wire_reader r(payload);
    const std::uint32_t id = r.u32();
    if (!r.ok())
        return r.error();
    return decode_body(id, r.rest());
}

result<check_file_reply> check_file_reply::decode_body(std::uint32_t id, byte_span body)
{
    wire_reader r(body);
    check_file_reply m;
    m.id = id;
    const auto name = r.text(detail::unbounded);
    if (r.ok() && name != ext::check_file_reply)
        return errc::invalid_argument;
    detail::get(r, m.algorithm);
    const auto rest = r.rest();
    if (!r.ok())
        return r.error();
    m.hashes.assign(rest.begin(), rest.end());
    return m;
}

// --- packet to message -------------------------------------------------------

namespace {

template <class Variant, class M>
result<Variant> as(byte_span payload)
{
    auto m = M::decode(payload);
    if (!m)
        return m.error();
    return Variant(std::move(*m));
}

using request_decoder = result<request> (*)(byte_span payload);

struct extension_entry {
    std::string_view name;
    request_decoder decode;
};

// Extension requests the codec decodes to their own struct.
constexpr extension_entry extension_decoders[] = {
    {ext::posix_rename, as<request, posix_rename_request>},
    {ext::statvfs, as<request, statvfs_request>},
    {ext::fstatvfs, as<request, fstatvfs_request>},
    {ext::hardlink, as<request, hardlink_request>},
    {ext::fsync, as<request, fsync_request>},
    {ext::lsetstat, as<request, lsetstat_request>},
    {ext::limits, as<request, limits_request>},
    {ext::expand_path, as<request, expand_path_request>},
    {ext::copy_data, as<request, copy_data_request>},
    {ext::home_directory, as<request, home_directory_request>},
    {ext::users_groups_by_id, as<request, users_groups_by_id_request>},
    {ext::check_file_handle, as<request, check_file_handle_request>},
    {ext::check_file_name, as<request, check_file_name_request>},
    {ext::open_named, as<request, open_named_request>},
};

result<request> decode_extended(byte_span payload)
{
    auto generic = extended_request::decode(payload);
    if (!generic)
        return generic.error();
    for (const auto& e : extension_decoders)
        if (e.name == generic->name)
            return e.decode(payload);
    return request(*generic);
}

// Indexed by packet type; null where the type is not a request.
constexpr auto request_decoders = [] {
    std::array<request_decoder, 256> t{};
    t[fxp::init] = as<request, init_request>;
    t[fxp::open] = as<request, open_request>;
    t[fxp::close] = as<request, close_request>;
    t[fxp::read] = as<request, read_request>;
    t[fxp::write] = as<request, write_request>;
    t[fxp::lstat] = as<request, lstat_request>;
    t[fxp::fstat] = as<request, fstat_request>;
    t[fxp::setstat] = as<request, setstat_request>;
    t[fxp::fsetstat] = as<request, fsetstat_request>;
    t[fxp::opendir] = as<request, opendir_request>;
    t[fxp::readdir] = as<request, readdir_request>;
    t[fxp::remove] = as<request, remove_request>;
    t[fxp::mkdir] = as<request, mkdir_request>;
    t[fxp::rmdir] = as<request, rmdir_request>;
    t[fxp::realpath] = as<request, realpath_request>;
    t[fxp::stat] = as<request, stat_request>;
    t[fxp::rename] = as<request, rename_request>;
    t[fxp::readlink] = as<request, readlink_request>;
    t[fxp::symlink] = as<request, symlink_request>;
    t[fxp::extended] = decode_extended;
    return t;
}();

using reply_decoder = result<reply> (*)(byte_span payload);

constexpr auto reply_decoders = [] {
    std::array<reply_decoder, 256> t{};
    t[fxp::version] = as<reply, version_reply>;
    t[fxp::status] = as<reply, status_reply>;
    t[fxp::handle] = as<reply, handle_reply>;
    t[fxp::data] = as<reply, data_reply>;
    t[fxp::name] = as<reply, name_reply>;
    t[fxp::attrs] = as<reply, attrs_reply>;
    t[fxp::extended_reply] = as<reply, extended_reply>;
    return t;
}();

} // namespace

result<request> decode_request(byte_span packet)
{
    if (packet.empty())
        return errc::incomplete;
    const auto decode = request_decoders[packet[0]];
    if (decode == nullptr)
        return errc::unsupported;
    return decode(packet.subspan(1));
}

std::optional<std::uint32_t> peek_request_id(byte_span packet) noexcept
{
    if (packet.size() < 5 || packet[0] == fxp::init || packet[0] == fxp::version)
        return std::nullopt;
    return load_u32(packet.data() + 1);
}

result<reply> decode_reply(byte_span packet)
{
    if (packet.empty())
        return errc::incomplete;
    const auto decode = reply_decoders[packet[0]];
    if (decode == nullptr)
        return errc::unsupported;
    return decode(packet.subspan(1));
}

} // namespace longhaul::sftp
