// SFTP version 3 (draft-ietf-secsh-filexfer-02) as OpenSSH speaks it:
// packet types, status codes, open and attribute flags, the extension
// names of OpenSSH's PROTOCOL file (section 4), and the size limits the
// codec and the server share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace longhaul::sftp {

inline constexpr std::uint32_t protocol_version = 3;

// Packet types (draft-02 §3).
namespace fxp {
inline constexpr std::uint8_t init = 1;
inline constexpr std::uint8_t version = 2;
inline constexpr std::uint8_t open = 3;
inline constexpr std::uint8_t close = 4;
inline constexpr std::uint8_t read = 5;
inline constexpr std::uint8_t write = 6;
inline constexpr std::uint8_t lstat = 7;
inline constexpr std::uint8_t fstat = 8;
inline constexpr std::uint8_t setstat = 9;
inline constexpr std::uint8_t fsetstat = 10;
inline constexpr std::uint8_t opendir = 11;
inline constexpr std::uint8_t readdir = 12;
inline constexpr std::uint8_t remove = 13;
inline constexpr std::uint8_t mkdir = 14;
inline constexpr std::uint8_t rmdir = 15;
inline constexpr std::uint8_t realpath = 16;
inline constexpr std::uint8_t stat = 17;
inline constexpr std::uint8_t rename = 18;
inline constexpr std::uint8_t readlink = 19;
inline constexpr std::uint8_t symlink = 20;
inline constexpr std::uint8_t status = 101;
inline constexpr std::uint8_t handle = 102;
inline constexpr std::uint8_t data = 103;
inline constexpr std::uint8_t name = 104;
inline constexpr std::uint8_t attrs = 105;
inline constexpr std::uint8_t extended = 200;
inline constexpr std::uint8_t extended_reply = 201;
} // namespace fxp

// Status codes (draft-02 §7).
enum class status_code : std::uint32_t {
    ok = 0,
    eof = 1,
    no_such_file = 2,
    permission_denied = 3,
    failure = 4,
    bad_message = 5,
    no_connection = 6,
    connection_lost = 7,
    op_unsupported = 8,
};

// The message OpenSSH's sftp-server puts in a STATUS reply ("No such file",
// "Unknown error" past op_unsupported).
std::string_view status_message(status_code c) noexcept;
std::string_view status_message(std::uint32_t c) noexcept;

// Open flags (pflags, draft-02 §6.3). APPEND is honoured by OpenSSH since 8.7.
namespace fxf {
inline constexpr std::uint32_t read = 0x01;
inline constexpr std::uint32_t write = 0x02;
inline constexpr std::uint32_t append = 0x04;
inline constexpr std::uint32_t creat = 0x08;
inline constexpr std::uint32_t trunc = 0x10;
inline constexpr std::uint32_t excl = 0x20;
} // namespace fxf

// Attribute flags (draft-02 §5). Version 3 defines no other bits: a packet
// carrying one cannot be parsed (the fields it announces are unknown).
namespace attr {
inline constexpr std::uint32_t size = 0x00000001;
inline constexpr std::uint32_t uidgid = 0x00000002;
inline constexpr std::uint32_t permissions = 0x00000004;
inline constexpr std::uint32_t acmodtime = 0x00000008;
inline constexpr std::uint32_t extended = 0x80000000;
inline constexpr std::uint32_t known = size | uidgid | permissions | acmodtime | extended;
} // namespace attr

// statvfs@openssh.com flag bits.
inline constexpr std::uint64_t statvfs_rdonly = 0x1;
inline constexpr std::uint64_t statvfs_nosuid = 0x2;

// Extension names (OpenSSH PROTOCOL §4) and the versions its server advertises.
namespace ext {
inline constexpr std::string_view posix_rename = "posix-rename@openssh.com";
inline constexpr std::string_view statvfs = "statvfs@openssh.com";
inline constexpr std::string_view fstatvfs = "fstatvfs@openssh.com";
inline constexpr std::string_view hardlink = "hardlink@openssh.com";
inline constexpr std::string_view fsync = "fsync@openssh.com";
inline constexpr std::string_view lsetstat = "lsetstat@openssh.com";
inline constexpr std::string_view limits = "limits@openssh.com";
inline constexpr std::string_view expand_path = "expand-path@openssh.com";
inline constexpr std::string_view copy_data = "copy-data";
inline constexpr std::string_view home_directory = "home-directory";
inline constexpr std::string_view users_groups_by_id = "users-groups-by-id@openssh.com";
// draft-ietf-secsh-filexfer-extensions-00 §3 (not OpenSSH's): a hash of a
// range of a file, by handle or by name, answered by "check-file".
inline constexpr std::string_view check_file_handle = "check-file-handle";
inline constexpr std::string_view check_file_name = "check-file-name";
inline constexpr std::string_view check_file_reply = "check-file";
// Longhaul's (docs/PROTOCOL.md): announced in VERSION, no request of its
// own. The server answers every request that arrived before the end of its
// input, in order, before it exits; a client may end its input right
// behind requests whose answers it still needs. (OpenSSH's sftp-server
// exits at that end with requests still queued.)
inline constexpr std::string_view drain_at_eof = "drain-at-eof@longhaul-ssh.org";
// Longhaul's (docs/PROTOCOL.md): OPEN with a handle the client names, so
// that requests on the file (a download's first READs) go out in the same
// flight instead of a round trip later, as 9P's client-chosen fids allow.
// Answered with SSH_FXP_HANDLE (that name) or a status.
inline constexpr std::string_view open_named = "open-named@longhaul-ssh.org";
} // namespace ext

// check-file: the smallest block-size the draft allows (0 means one hash
// of the whole range).
inline constexpr std::uint32_t min_check_file_block = 256;

// Size limits. OpenSSH's sftp-server takes packets up to 256 KiB and reads
// and writes of 255 KiB; Longhaul's server takes 256 KiB reads and writes
// (and says so in its limits@openssh.com reply), so its packets may be a
// little longer. A packet's length counts the type byte and what follows,
// not the 4-byte length itself.
inline constexpr std::uint32_t openssh_max_packet_length = 256 * 1024;
inline constexpr std::uint32_t default_max_io_length = 256 * 1024;
inline constexpr std::uint32_t default_max_packet_length = default_max_io_length + 1024;
// Handles are at most 256 bytes (draft-02 §3.2).
inline constexpr std::size_t max_handle_length = 256;
// A handle named by the client (open-named@longhaul-ssh.org).
inline constexpr std::size_t max_named_handle_length = 32;
// Extended attribute pairs accepted in one ATTRS (OpenSSH takes up to
// 0x100000 and discards them; every pair costs at least 8 bytes of packet,
// but each decoded pair is two allocations, so the count is capped).
inline constexpr std::uint32_t max_extended_attrs = 256;
// Extension pairs accepted in INIT or VERSION.
inline constexpr std::uint32_t max_version_extensions = 256;

} // namespace longhaul::sftp
