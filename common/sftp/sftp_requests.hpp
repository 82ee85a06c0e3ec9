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
    friend bool operator==(const open_request&, const open_request&) = default;
};

struct close_request {
    static constexpr std::uint8_t type = fxp::close;
    std::uint32_t id = 0;
    bytes handle;
    LONGHAUL_SFTP_MESSAGE(close_request, handle)
    friend bool operator==(const close_request&, const close_request&) = default;
};

struct read_request {
    static constexpr std::uint8_t type = fxp::read;
    std::uint32_t id = 0;
    bytes handle;
    std::uint64_t offset = 0;
    std::uint32_t length = 0;
    LONGHAUL_SFTP_MESSAGE(read_request, handle, offset, length)
    friend bool operator==(const read_request&, const read_request&) = default;
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
    friend bool operator==(const lstat_request&, const lstat_request&) = default;
};

struct fstat_request {
    static constexpr std::uint8_t type = fxp::fstat;
    std::uint32_t id = 0;
    bytes handle;
    LONGHAUL_SFTP_MESSAGE(fstat_request, handle)
    friend bool operator==(const fstat_request&, const fstat_request&) = default;
};

struct setstat_request {
    static constexpr std::uint8_t type = fxp::setstat;
    std::uint32_t id = 0;
    std::string path;
    attrs attributes;
    LONGHAUL_SFTP_MESSAGE(setstat_request, path, attributes)
    friend bool operator==(const setstat_request&, const setstat_request&) = default;
};

struct fsetstat_request {
    static constexpr std::uint8_t type = fxp::fsetstat;
    std::uint32_t id = 0;
    bytes handle;
    attrs attributes;
    LONGHAUL_SFTP_MESSAGE(fsetstat_request, handle, attributes)
    friend bool operator==(const fsetstat_request&, const fsetstat_request&) = default;
};

struct opendir_request {
    static constexpr std::uint8_t type = fxp::opendir;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(opendir_request, path)
    friend bool operator==(const opendir_request&, const opendir_request&) = default;
};

struct readdir_request {
    static constexpr std::uint8_t type = fxp::readdir;
    std::uint32_t id = 0;
    bytes handle;
    LONGHAUL_SFTP_MESSAGE(readdir_request, handle)
    friend bool operator==(const readdir_request&, const readdir_request&) = default;
};

struct remove_request {
    static constexpr std::uint8_t type = fxp::remove;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(remove_request, path)
    friend bool operator==(const remove_request&, const remove_request&) = default;
};

struct mkdir_request {
    static constexpr std::uint8_t type = fxp::mkdir;
    std::uint32_t id = 0;
    std::string path;
    attrs attributes;
    LONGHAUL_SFTP_MESSAGE(mkdir_request, path, attributes)
    friend bool operator==(const mkdir_request&, const mkdir_request&) = default;
};

struct rmdir_request {
    static constexpr std::uint8_t type = fxp::rmdir;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(rmdir_request, path)
    friend bool operator==(const rmdir_request&, const rmdir_request&) = default;
};

struct realpath_request {
    static constexpr std::uint8_t type = fxp::realpath;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(realpath_request, path)
    friend bool operator==(const realpath_request&, const realpath_request&) = default;
};

struct stat_request {
    static constexpr std::uint8_t type = fxp::stat;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(stat_request, path)
    friend bool operator==(const stat_request&, const stat_request&) = default;
};

struct rename_request {
    static constexpr std::uint8_t type = fxp::rename;
    std::uint32_t id = 0;
    std::string old_path, new_path;
    LONGHAUL_SFTP_MESSAGE(rename_request, old_path, new_path)
    friend bool operator==(const rename_request&, const rename_request&) = default;
};

struct readlink_request {
    static constexpr std::uint8_t type = fxp::readlink;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(readlink_request, path)
    friend bool operator==(const readlink_request&, const readlink_request&) = default;
};

// OpenSSH sends SYMLINK's arguments in the reverse of the draft's order
// (PROTOCOL §4.1): the target first, then the path of the link to create.
// Every OpenSSH client and server does, so Longhaul does too.
struct symlink_request {
    static constexpr std::uint8_t type = fxp::symlink;
    std::uint32_t id = 0;
    std::string target_path, link_path;
    LONGHAUL_SFTP_MESSAGE(symlink_request, target_path, link_path)
    friend bool operator==(const symlink_request&, const symlink_request&) = default;
};

// --- SSH_FXP_EXTENDED requests (OpenSSH PROTOCOL §4) ------------------------

struct posix_rename_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::posix_rename;
    std::uint32_t id = 0;
    std::string old_path, new_path;
    LONGHAUL_SFTP_MESSAGE(posix_rename_request, old_path, new_path)
    friend bool operator==(const posix_rename_request&, const posix_rename_request&) = default;
};

struct statvfs_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::statvfs;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(statvfs_request, path)
    friend bool operator==(const statvfs_request&, const statvfs_request&) = default;
};

struct fstatvfs_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::fstatvfs;
    std::uint32_t id = 0;
    bytes handle;
    LONGHAUL_SFTP_MESSAGE(fstatvfs_request, handle)
    friend bool operator==(const fstatvfs_request&, const fstatvfs_request&) = default;
};

struct hardlink_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::hardlink;
    std::uint32_t id = 0;
    std::string old_path, new_path;
    LONGHAUL_SFTP_MESSAGE(hardlink_request, old_path, new_path)
    friend bool operator==(const hardlink_request&, const hardlink_request&) = default;
};

struct fsync_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::fsync;
    std::uint32_t id = 0;
    bytes handle;
    LONGHAUL_SFTP_MESSAGE(fsync_request, handle)
    friend bool operator==(const fsync_request&, const fsync_request&) = default;
};

struct lsetstat_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::lsetstat;
    std::uint32_t id = 0;
    std::string path;
    attrs attributes;
    LONGHAUL_SFTP_MESSAGE(lsetstat_request, path, attributes)
    friend bool operator==(const lsetstat_request&, const lsetstat_request&) = default;
};

struct limits_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::limits;
    std::uint32_t id = 0;
    LONGHAUL_SFTP_MESSAGE(limits_request)
    friend bool operator==(const limits_request&, const limits_request&) = default;
};

struct expand_path_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::expand_path;
    std::uint32_t id = 0;
    std::string path;
    LONGHAUL_SFTP_MESSAGE(expand_path_request, path)
    friend bool operator==(const expand_path_request&, const expand_path_request&) = default;
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
    friend bool operator==(const copy_data_request&, const copy_data_request&) = default;
};

// home-directory: an empty name means the session's user.
struct home_directory_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::home_directory;
    std::uint32_t id = 0;
    std::string username;
    LONGHAUL_SFTP_MESSAGE(home_directory_request, username)
    friend bool operator==(const home_directory_request&, const home_directory_request&) = default;
};

struct users_groups_by_id_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::users_groups_by_id;
    std::uint32_t id = 0;
    id_list uids, gids;
    LONGHAUL_SFTP_MESSAGE(users_groups_by_id_request, uids, gids)
    friend bool operator==(const users_groups_by_id_request&, const users_groups_by_id_request&) = default;
};

// check-file-handle / check-file-name (draft-ietf-secsh-filexfer-extensions-00
// §3): a hash of [start_offset, start_offset + length) of the file, to the
// end of the file when length is 0; one hash of the whole range when
// block_size is 0, else one per block of block_size bytes (at least 256).
// `algorithms` is the client's comma-separated list, in its preference:
// the server uses the first one it has.
struct check_file_handle_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::check_file_handle;
    std::uint32_t id = 0;
    bytes handle;
    std::string algorithms;
    std::uint64_t start_offset = 0, length = 0;
    std::uint32_t block_size = 0;
    LONGHAUL_SFTP_MESSAGE(check_file_handle_request, handle, algorithms, start_offset, length, block_size)
    friend bool operator==(const check_file_handle_request&, const check_file_handle_request&) = default;
};

struct check_file_name_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::check_file_name;
    std::uint32_t id = 0;
    std::string path;
    std::string algorithms;
    std::uint64_t start_offset = 0, length = 0;
    std::uint32_t block_size = 0;
    LONGHAUL_SFTP_MESSAGE(check_file_name_request, path, algorithms, start_offset, length, block_size)
    friend bool operator==(const check_file_name_request&, const check_file_name_request&) = default;
};

// open-named@longhaul-ssh.org: OPEN whose handle is `handle`, chosen by
// the client (docs/PROTOCOL.md).
struct open_named_request {
    static constexpr std::uint8_t type = fxp::extended;
    static constexpr std::string_view ext_name = ext::open_named;
    std::uint32_t id = 0;
    bytes handle;
    std::string path;
    std::uint32_t pflags = 0; // fxf::*
    attrs attributes;
    LONGHAUL_SFTP_MESSAGE(open_named_request, handle, path, pflags, attributes)
    friend bool operator==(const open_named_request&, const open_named_request&) = default;
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
                             users_groups_by_id_request, check_file_handle_request, check_file_name_request,
                             open_named_request, extended_request>;

// One packet (type byte first, as sftp_framing gives it) to a request. An
// extension the codec knows decodes to its struct; others to
// extended_request. errc::unsupported for a type that is not a request.
result<request> decode_request(byte_span packet);

// The request id of a packet (type byte first), when it has one: lets a
// server answer a request it cannot decode with a status for that id.
std::optional<std::uint32_t> peek_request_id(byte_span packet) noexcept;

} // namespace longhaul::sftp
