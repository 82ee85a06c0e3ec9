// SFTP replies, server to client: one struct per message with encode and
// decode. decode_reply() turns a framed packet into one of the seven reply
// types; the body of an EXTENDED_REPLY depends on the request it answers,
// so the client decodes it with the matching *_reply struct
// (statvfs_reply::decode(payload) etc.).
#pragma once

#include "common/sftp/detail/sftp_fields.hpp"

#include <array>
#include <string>
#include <variant>
#include <vector>

namespace longhaul::sftp {

struct version_reply {
    static constexpr std::uint8_t type = fxp::version;
    std::uint32_t version = protocol_version;
    std::vector<extension_pair> extensions;
    void encode_to(bytes& out) const;
    bytes encode() const;
    static result<version_reply> decode(byte_span payload);
    // The version string of an advertised extension, or nullptr.
    const std::string* find(std::string_view name) const noexcept;
    friend bool operator==(const version_reply&, const version_reply&) = default;
};

// Version 3 STATUS carries a message and a language tag; decode accepts
// their absence (version 0-2 servers), leaving them empty.
struct status_reply {
    static constexpr std::uint8_t type = fxp::status;
    std::uint32_t id = 0;
    std::uint32_t code = 0; // status_code, kept raw: a server may send any value
    std::string message;
    std::string language;
    void encode_to(bytes& out) const;
    bytes encode() const;
    static result<status_reply> decode(byte_span payload);
    friend bool operator==(const status_reply&, const status_reply&) = default;
};

// decode rejects handles longer than 256 bytes (draft-02 §3.2).
struct handle_reply {
    static constexpr std::uint8_t type = fxp::handle;
    std::uint32_t id = 0;
    bytes handle;
    void encode_to(bytes& out) const;
    bytes encode() const;
    static result<handle_reply> decode(byte_span payload);
    friend bool operator==(const handle_reply&, const handle_reply&) = default;
};

struct data_reply {
    static constexpr std::uint8_t type = fxp::data;
    std::uint32_t id = 0;
    byte_span data; // into the packet
    LONGHAUL_SFTP_MESSAGE(data_reply, data)
};
// A server that reads file data straight into its output buffer writes this
// header (uint32 length, type, id, uint32 data length) and then the data.
inline constexpr std::size_t data_reply_header_size = 13;
void write_data_reply_header(std::uint8_t* out, std::uint32_t id, std::uint32_t data_length) noexcept;

struct name_reply {
    static constexpr std::uint8_t type = fxp::name;
    std::uint32_t id = 0;
    std::vector<name_entry> entries;
    LONGHAUL_SFTP_MESSAGE(name_reply, entries)
    friend bool operator==(const name_reply&, const name_reply&) = default;
};

struct attrs_reply {
    static constexpr std::uint8_t type = fxp::attrs;
    std::uint32_t id = 0;
    attrs attributes;
    LONGHAUL_SFTP_MESSAGE(attrs_reply, attributes)
    friend bool operator==(const attrs_reply&, const attrs_reply&) = default;
};

// SSH_FXP_EXTENDED_REPLY as it arrives: the id and the undecoded rest.
struct extended_reply {
    static constexpr std::uint8_t type = fxp::extended_reply;
    std::uint32_t id = 0;
    byte_span data; // into the packet
    void encode_to(bytes& out) const;
    bytes encode() const;
    static result<extended_reply> decode(byte_span payload);
};

// --- EXTENDED_REPLY bodies ---------------------------------------------------

// statvfs@openssh.com / fstatvfs@openssh.com.
struct statvfs_reply {
    static constexpr std::uint8_t type = fxp::extended_reply;
    std::uint32_t id = 0;
    std::uint64_t bsize = 0, frsize = 0, blocks = 0, bfree = 0, bavail = 0, files = 0, ffree = 0, favail = 0,
                  fsid = 0, flag = 0, namemax = 0;
    LONGHAUL_SFTP_MESSAGE(statvfs_reply, bsize, frsize, blocks, bfree, bavail, files, ffree, favail, fsid, flag,
                          namemax)
    friend bool operator==(const statvfs_reply&, const statvfs_reply&) = default;
};

// limits@openssh.com. Zero means "no limit stated".
struct limits_reply {
    static constexpr std::uint8_t type = fxp::extended_reply;
    std::uint32_t id = 0;
    std::uint64_t max_packet_length = 0, max_read_length = 0, max_write_length = 0, max_open_handles = 0;
    LONGHAUL_SFTP_MESSAGE(limits_reply, max_packet_length, max_read_length, max_write_length, max_open_handles)
    friend bool operator==(const limits_reply&, const limits_reply&) = default;
};

// users-groups-by-id@openssh.com: a name per requested id, empty when unknown.
struct users_groups_by_id_reply {
    static constexpr std::uint8_t type = fxp::extended_reply;
    std::uint32_t id = 0;
    packed_names users, groups;
    LONGHAUL_SFTP_MESSAGE(users_groups_by_id_reply, users, groups)
    friend bool operator==(const users_groups_by_id_reply&, const users_groups_by_id_reply&) = default;
};

// check-file (the reply to check-file-handle and check-file-name): the
// algorithm the server used and the hashes, concatenated to the end of the
// packet (no length: a block's hash is digest-sized). decode rejects a
// reply whose name is not "check-file".
struct check_file_reply {
    static constexpr std::uint8_t type = fxp::extended_reply;
    std::uint32_t id = 0;
    std::string algorithm;
    bytes hashes;
    void encode_to(bytes& out) const;
    bytes encode() const;
    static result<check_file_reply> decode(byte_span payload);
    // From an extended_reply as the client core hands it (the id read).
    static result<check_file_reply> decode_body(std::uint32_t id, byte_span body);
    friend bool operator==(const check_file_reply&, const check_file_reply&) = default;
};

using reply = std::variant<version_reply, status_reply, handle_reply, data_reply, name_reply, attrs_reply,
                           extended_reply>;

// One packet (type byte first) to a reply; errc::unsupported for a type
// that is not a reply.
result<reply> decode_reply(byte_span packet);

} // namespace longhaul::sftp
