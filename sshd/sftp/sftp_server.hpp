// The SFTP server core, sans-I/O on the channel side: bytes in (the
// client's packet stream), bytes out (replies), log lines through a sink.
// It performs the requests on a `filesystem` (paths) and on descriptors it
// owns (pread/pwrite on open handles), so it is what sftp-server(8) and
// sshd's internal-sftp run, and what the unit tests and the fuzz target
// drive in memory.
//
// Behaviour follows OpenSSH's sftp-server: the request table with its
// names (-p/-P/-Q), read-only mode (-R), the status codes and their
// messages, and its log lines at the same levels. Where OpenSSH exits on a
// malformed request, this server answers SSH_FX_BAD_MESSAGE and carries on
// (docs/ARCHITECTURE.md lists the departures).
#pragma once

#include "common/buffer.hpp"
#include "common/log.hpp"
#include "common/sftp/sftp_protocol.hpp"
#include "common/sftp/sftp_replies.hpp"
#include "common/sftp/sftp_requests.hpp"
#include "sshd/sftp/sftp_fs.hpp"
#include "sshd/sftp/sftp_names.hpp"

#include <dirent.h>

#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::sftp {

struct server_options {
    bool read_only = false;                           // -R
    std::optional<std::vector<std::string>> allowed;  // -p: only these requests
    std::optional<std::vector<std::string>> denied;   // -P: never these
    std::string start_directory;                      // -d, already expanded; empty: stay
    log_level level = log_level::error;               // -l (OpenSSH's default is ERROR)
    std::uint32_t max_packet_length = default_max_packet_length;
    std::uint32_t max_read_length = default_max_io_length;
    std::uint32_t max_write_length = default_max_io_length;
    // Open handles at once (files and directories), and directories among
    // them (each DIR stream holds a 32 KiB buffer). The program lowers
    // max_handles to what RLIMIT_NOFILE allows.
    std::size_t max_handles = 16384;
    std::size_t max_directory_handles = 256;
    // Bytes one check-file request may hash: the core serves one request
    // at a time, so this bounds how long one can hold up the others
    // (sftp_check_file.cpp).
    std::uint64_t max_check_length = 256 * 1024 * 1024;
    std::string user = "UNKNOWN";          // the local user, for log lines
    std::string home = "/";                // home-directory with an empty name
    std::string client_address = "UNKNOWN"; // from SSH_CONNECTION
    std::function<std::time_t()> clock;    // ls -l dates; time(nullptr) when unset
};

// Receives every log line at or below options.level (OpenSSH's words; the
// sink adds "debug1: " prefixes, as logger does).
using log_sink = std::function<void(log_level, std::string_view)>;

class server {
public:
    server(server_options options, filesystem& fs, name_service& names, log_sink log);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    // Logs "session opened ..." and changes to the start directory.
    void start();

    // Input: read straight into input_space(), then commit_input(n); an
    // empty span means "stop reading for now" (output backlog). feed()
    // copies and processes, returning how much it took.
    mutable_byte_span input_space();
    void commit_input(std::size_t n);
    std::size_t feed(byte_span data);
    // The client closed its side: the requests already complete are
    // served, then the session ends (open handles closed and logged).
    void input_eof();

    // Serves complete requests while the output backlog allows.
    void process();
    // Ends the session now (the client's output went away, or an I/O
    // error): open handles are closed and logged as OpenSSH's cleanup does.
    void close_session(int exit_status) { finish(exit_status); }

    byte_span output() const noexcept { return out_.data(); }
    void consume_output(std::size_t n) noexcept { out_.consume(n); }

    bool finished() const noexcept { return finished_; }
    // 0 after EOF; 255 after a fatal protocol error (request before INIT).
    int exit_status() const noexcept { return exit_status_; }
    std::size_t open_handles() const noexcept { return handles_in_use_; }
    // What limits@openssh.com advertises for handles.
    std::size_t handle_limit() const noexcept { return options_.max_handles; }

    // The request names of -Q requests, -p and -P, in OpenSSH's order.
    static std::vector<std::string_view> request_names();
    // The hash algorithms check-file takes, as VERSION advertises them.
    static std::string_view check_file_algorithm_list() noexcept;

    // Implementation details shared by the handler files.
    struct handle_entry {
        enum class kind : std::uint8_t { unused, file, directory } use = kind::unused;
        int fd = -1;
        DIR* dir = nullptr;
        int flags = 0; // open(2) flags of a file
        std::string name;
        bytes named; // the client's name for it (open-named@longhaul-ssh.org), else empty
        std::uint64_t bytes_read = 0, bytes_written = 0;
        std::uint32_t generation = 0;
    };
    struct handler;

private:
    static std::span<const handler> standard_handlers();
    static std::span<const handler> extended_handlers();
    static const handler& open_handler(); // OPEN's entry (open-named is bound by it too)

    std::size_t output_high_water() const noexcept;
    void handle_packet(byte_span packet);
    bool handle_oversize(std::uint32_t length);
    void dispatch(const handler& h, std::uint32_t id, byte_span payload);
    // Whether read-only mode and the -P/-p lists let a request through, and
    // why: permitted() logs the reason as OpenSSH does, allowed() does not.
    enum class verdict { permitted, read_only, denylisted, allowlisted, not_allowlisted };
    verdict judge(const handler& h) const noexcept;
    bool permitted(const handler& h);
    bool allowed(const handler& h) const noexcept;
    void bad_message(std::uint32_t id, std::string_view where, errc e);
    void finish(int status);

    // Replies.
    template <class M>
    void send(const M& m)
    {
        scratch_.clear();
        m.encode_to(scratch_);
        out_.append(scratch_);
    }
    void send_status(std::uint32_t id, status_code code, std::string_view message = {});
    void send_handle(std::uint32_t id, int index);
    void send_attrs(std::uint32_t id, const attrs& a);
    void send_names(std::uint32_t id, std::vector<name_entry> entries);
    void send_statvfs(std::uint32_t id, const struct statvfs& st);

    // Handles.
    int new_handle(handle_entry::kind kind, std::string name, int fd, DIR* dir, int flags);
    int find_handle(const bytes& h) const noexcept; // -1 when invalid
    int handle_fd(int index) const noexcept;         // -1 unless a file
    const char* handle_name(int index) const noexcept; // "(null)" when invalid, as OpenSSH logs it
    int close_handle(int index);                      // 0 or errno
    void log_close(int index, std::string_view prefix);

    // Logging (only formatted when the level is on).
    bool logging(log_level l) const noexcept { return l <= options_.level; }
    void log(log_level l, std::string_view m);

    // Paths.
    int realpath(const std::string& path, std::string& resolved);
    std::time_t now() const;

    // The operations (sftp_operations.cpp, sftp_extensions.cpp, sftp_check_file.cpp).
    void do_init(byte_span payload);
    void do_open(std::uint32_t id, byte_span payload);
    // OPEN's work: the new handle's index, or -1 once a status is sent.
    int open_file(std::uint32_t id, std::string path, std::uint32_t pflags, const attrs& a);
    void do_close(std::uint32_t id, byte_span payload);
    void do_read(std::uint32_t id, byte_span payload);
    void do_write(std::uint32_t id, byte_span payload);
    void do_lstat(std::uint32_t id, byte_span payload);
    void do_fstat(std::uint32_t id, byte_span payload);
    void do_setstat(std::uint32_t id, byte_span payload);
    void do_fsetstat(std::uint32_t id, byte_span payload);
    void do_opendir(std::uint32_t id, byte_span payload);
    void do_readdir(std::uint32_t id, byte_span payload);
    void do_remove(std::uint32_t id, byte_span payload);
    void do_mkdir(std::uint32_t id, byte_span payload);
    void do_rmdir(std::uint32_t id, byte_span payload);
    void do_realpath(std::uint32_t id, byte_span payload);
    void do_stat(std::uint32_t id, byte_span payload);
    void do_rename(std::uint32_t id, byte_span payload);
    void do_readlink(std::uint32_t id, byte_span payload);
    void do_symlink(std::uint32_t id, byte_span payload);
    void do_posix_rename(std::uint32_t id, byte_span payload);
    void do_statvfs(std::uint32_t id, byte_span payload);
    void do_fstatvfs(std::uint32_t id, byte_span payload);
    void do_hardlink(std::uint32_t id, byte_span payload);
    void do_fsync(std::uint32_t id, byte_span payload);
    void do_lsetstat(std::uint32_t id, byte_span payload);
    void do_limits(std::uint32_t id, byte_span payload);
    void do_expand_path(std::uint32_t id, byte_span payload);
    void do_copy_data(std::uint32_t id, byte_span payload);
    void do_home_directory(std::uint32_t id, byte_span payload);
    void do_users_groups_by_id(std::uint32_t id, byte_span payload);
    void do_check_file_handle(std::uint32_t id, byte_span payload);
    void do_check_file_name(std::uint32_t id, byte_span payload);
    void do_open_named(std::uint32_t id, byte_span payload);
    void check_file(std::uint32_t id, int fd, const char* name, const std::string& algorithms, std::uint64_t start,
                    std::uint64_t length, std::uint32_t block_size);
    void do_stat_common(std::uint32_t id, const std::string& path, bool follow);
    void apply_attrs(std::uint32_t id, const std::string& name, const attrs& a, int fd, bool follow);

    server_options options_;
    filesystem& fs_;
    name_service& names_;
    log_sink log_;
    byte_buffer in_;
    byte_buffer out_;
    bytes scratch_;
    std::vector<handle_entry> handles_;
    std::vector<int> free_handles_;
    std::map<bytes, int> named_handles_; // open-named's: the client's name -> index
    std::size_t handles_in_use_ = 0;
    std::size_t directories_in_use_ = 0;
    std::uint64_t skip_ = 0; // bytes of an oversize packet still to discard
    std::uint32_t client_version_ = protocol_version; // from INIT
    bool init_done_ = false;
    bool eof_ = false;
    bool finished_ = false;
    int exit_status_ = 0;
};

} // namespace longhaul::sftp
