// SFTP requests, client to server: one struct per message with encode and
// decode (draft-02 §6 and OpenSSH's PROTOCOL §4 extensions). Bytes in,
// messages out: decode_request() turns one framed packet (sftp_framing.hpp)
// into a request; encode() gives the packet to send. Spans (write data, the
// payload of an unknown extension) point into the decoded packet.
#pragma once

#include "common/sftp/detail/sftp_fields.hpp"

#include <string>
#include <optional>
#include <variant>
#include <vector>

namespace longhaul::sftp {

// SSH_FXP_INIT: no request id; extension pairs may follow the version.
struct init_request {
    static constexpr std::uint8_t type = fxp::init;
    std::uint32_t version = protocol_version;
    std::vector<extension_pair> extensions;
    void encode_to(bytes& out) const;
    bytes encode() const;
    static result<init_request> decode(byte_span payload);
    friend bool operator==(const init_request&, const init_request&) = default;
};

struct open_request {
    static constexpr std::uint8_t type = fxp::open;
    std::uint32_t id = 0;
    std::string path;
    std::uint32_t pflags = 0; // fxf::*
    attrs attributes;
    LONGHAUL_SFTP_MESSAGE(open_request, path, pflags, attributes)
};

struct close_request {
    static constexpr std::uint8_t type = fxp::close;
    std::uint32_t id = 0;
    bytes handle;
    LONGHAUL_SFTP_MESSAGE(close_request, handle)
};

struct read_request {
    static constexpr std::uint8_t type = fxp::read;
    std::uint32_t id = 0;
    bytes handle;
    std::uint64_t offset = 0;
    std::uint32_t length = 0;
    LONGHAUL_SFTP_MESSAGE(read_request, handle, offset, length)
};

struct write_request {
    static constexpr std::uint8_t type = fxp::write;
    std::uint32_t id = 0;
    bytes handle;
    std::uint64_t offset = 0;
    byte_span data; // into the packet: no copy of the payload
    LONGHAUL_SFTP_MESSAGE(write_request, handle, offset, data)
};

struct lstat_request {
    static constexpr std::uint8_t type = fxp::lstat;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(lstat_request, path)
};

struct fstat_request {
    static constexpr std::uint8_t type = fxp::fstat;
    std::uint32_t id = 0;
    bytes handle;
    LONGHAUL_SFTP_MESSAGE(fstat_request, handle)
};

struct setstat_request {
    static constexpr std::uint8_t type = fxp::setstat;
    std::uint32_t id = 0;
    std::string path;
    attrs attributes;
    LONGHAUL_SFTP_MESSAGE(setstat_request, path, attributes)
};

struct fsetstat_request {
    static constexpr std::uint8_t type = fxp::fsetstat;
    std::uint32_t id = 0;
    bytes handle;
    attrs attributes;
    LONGHAUL_SFTP_MESSAGE(fsetstat_request, handle, attributes)
};

struct opendir_request {
    static constexpr std::uint8_t type = fxp::opendir;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(opendir_request, path)
};

struct readdir_request {
    static constexpr std::uint8_t type = fxp::readdir;
    std::uint32_t id = 0;
    bytes handle;
    LONGHAUL_SFTP_MESSAGE(readdir_request, handle)
};

struct remove_request {
    static constexpr std::uint8_t type = fxp::remove;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(remove_request, path)
};

struct mkdir_request {
    static constexpr std::uint8_t type = fxp::mkdir;
    std::uint32_t id = 0;
    std::string path;
    attrs attributes;
    LONGHAUL_SFTP_MESSAGE(mkdir_request, path, attributes)
};

struct rmdir_request {
    static constexpr std::uint8_t type = fxp::rmdir;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(rmdir_request, path)
};

struct realpath_request {
    static constexpr std::uint8_t type = fxp::realpath;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(realpath_request, path)
};

struct stat_request {
    static constexpr std::uint8_t type = fxp::stat;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(stat_request, path)
};

struct rename_request {
    static constexpr std::uint8_t type = fxp::rename;
    std::uint32_t id = 0;
    std::string old_path, new_path;
    LONGHAUL_SFTP_MESSAGE(rename_request, old_path, new_path)
};

struct readlink_request {
    static constexpr std::uint8_t type = fxp::readlink;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(readlink_request, path)
};

// OpenSSH sends SYMLINK's arguments in the reverse of the draft's order
// (PROTOCOL §4.1): the target first, then the path of the link to create.
// Every OpenSSH client and server does, so Longhaul does too.
struct symlink_request {
    static constexpr std::uint8_t type = fxp::symlink;
    std::uint32_t id = 0;
    std::string target_path, link_path;
    LONGHAUL_SFTP_MESSAGE(symlink_request, target_path, link_path)
};

// --- SSH_FXP_EXTENDED requests (OpenSSH PROTOCOL §4) ------------------------

struct posix_rename_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::posix_rename;
    std::uint32_t id = 0;
    std::string old_path, new_path;
    LONGHAUL_SFTP_MESSAGE(posix_rename_request, old_path, new_path)
};

struct statvfs_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::statvfs;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(statvfs_request, path)
};

struct fstatvfs_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::fstatvfs;
    std::uint32_t id = 0;
    bytes handle;
    LONGHAUL_SFTP_MESSAGE(fstatvfs_request, handle)
};

struct hardlink_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::hardlink;
    std::uint32_t id = 0;
    std::string old_path, new_path;
    LONGHAUL_SFTP_MESSAGE(hardlink_request, old_path, new_path)
};

struct fsync_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::fsync;
    std::uint32_t id = 0;
    bytes handle;
    LONGHAUL_SFTP_MESSAGE(fsync_request, handle)
};

struct lsetstat_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::lsetstat;
    std::uint32_t id = 0;
    std::string path;
    attrs attributes;
    LONGHAUL_SFTP_MESSAGE(lsetstat_request, path, attributes)
};

struct limits_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::limits;
    std::uint32_t id = 0;
    LONGHAUL_SFTP_MESSAGE(limits_request)
};

struct expand_path_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::expand_path;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(expand_path_request, path)
};

// copy-data: a read_length of 0 copies to the end of the file.
struct copy_data_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::copy_data;
    std::uint32_t id = 0;
    bytes read_handle;
    std::uint64_t read_offset = 0, read_length = 0;
    bytes write_handle;
    std::uint64_t write_offset = 0;
    LONGHAUL_SFTP_MESSAGE(copy_data_request, read_handle, read_offset, read_length, write_handle, write_offset)
};

// home-directory: an empty name means the session's user.
struct home_directory_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::home_directory;
    std::uint32_t id = 0;
    std::string username;
    LONGHAUL_SFTP_MESSAGE(home_directory_request, username)
};

struct users_groups_by_id_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::users_groups_by_id;
    std::uint32_t id = 0;
    id_list uids, gids;
    LONGHAUL_SFTP_MESSAGE(users_groups_by_id_request, uids, gids)
};

// Any other SSH_FXP_EXTENDED: the name and the undecoded rest.
struct extended_request {
    static constexpr std::uint8_t type = fxp::extended;
    std::uint32_t id = 0;
    std::string name;
    byte_span data; // into the packet
    void encode_to(bytes& out) const;
    bytes encode() const;
    static result<extended_request> decode(byte_span payload);
};

using request = std::variant<init_request, open_request, close_request, read_request, write_request, lstat_request,
                             fstat_request, setstat_request, fsetstat_request, opendir_request, readdir_request,
                             remove_request, mkdir_request, rmdir_request, realpath_request, stat_request,
                             rename_request, readlink_request, symlink_request, posix_rename_request,
                             statvfs_request, fstatvfs_request, hardlink_request, fsync_request, lsetstat_request,
                             limits_request, expand_path_request, copy_data_request, home_directory_request,
                             users_groups_by_id_request, extended_request>;

// One packet (type byte first, as sftp_framing gives it) to a request. An
// extension the codec knows decodes to its struct; others to
// extended_request. errc::unsupported for a type that is not a request.
result<request> decode_request(byte_span packet);

// The request id of a packet (type byte first), when it has one: lets a
// server answer a request it cannot decode with a status for that id.
std::optional<std::uint32_t> peek_request_id(byte_span packet) noexcept;

} // namespace longhaul::sftp
