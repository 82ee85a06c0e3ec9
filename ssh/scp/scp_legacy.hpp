// The legacy scp protocol (scp -O, and the remote `scp -t` / `scp -f`
// side it runs): OpenSSH's source(), rsource() and sink() over two
// descriptors, record for record. It is a stop-and-wait protocol (one
// file at a time, an acknowledgement per record), so it is kept simple
// and blocking; the pipelined engine is the SFTP path.
//
// Records: "T<mtime> 0 <atime> 0" (with -p), "C<mode> <size> <name>"
// then the data and a NUL, "D<mode> 0 <name>" ... "E" for a directory;
// every record is answered with NUL (ok), 1 + message (an error, go on)
// or 2 + message (fatal).
#pragma once

#include "ssh/sftp_client/progress_meter.hpp"

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace longhaul::scp {

struct legacy_settings {
    bool preserve = false;
    bool recursive = false;
    bool target_must_be_dir = false;
    bool strict_names = true; // check received names against the request
    int verbose = 0;
    bool remote = false;      // we are the remote side (-t/-f): errors go to the peer
    bool show_progress = false;
    std::uint64_t limit_bps = 0; // -l, bits per second
};

// Ends the program with this status (lost connection, fatal response,
// protocol error), after the message was printed.
struct legacy_exit {
    int code;
};

// The name a source sends for `name` (its path as given): unchanged unless
// it holds a newline, then encoded as OpenSSH's scp encodes it (scp_legacy.cpp).
std::string legacy_wire_name(const std::string& name);

// How OpenSSH's scp shows a message of its own on stderr (fmprintf):
// printable ASCII, tab, newline and carriage return as they are, a
// printable UTF-8 character as it is when the locale is UTF-8, any other
// byte as "\ooo". The locale is UTF-8 when the first of LC_ALL, LC_CTYPE
// and LANG that is set names UTF-8, as OpenSSH's msetlocale() decides.
std::string legacy_stderr_text(const std::string& m, bool utf8);
bool legacy_utf8_environment();

class legacy_peer {
public:
    legacy_peer(int in_fd, int out_fd, legacy_settings s);

    // Sends files and (with -r) directories: the uploading client or the
    // remote side of a download (-f). A missing file is reported and
    // skipped.
    void source(const std::vector<std::string>& names);
    // Receives into `target`: the downloading client (src: the requested
    // remote path, for the name check) or the remote side of an upload
    // (-t). Throws legacy_exit on a protocol error.
    void sink(const std::string& target, const std::string* src);
    // One acknowledgement: 0 ok, -1 an error the peer reported.
    int response();

    int errors() const noexcept { return errs_; }
    // OpenSSH's run_err(): to the peer (as 1 + "scp: " + message) when we
    // are the remote side or talking to one, to stderr when local.
    void run_err(const std::string& m);

private:
    void rsource(const std::string& name, const struct stat& st);
    bool do_times(const struct stat& st);
    void send(const std::string& s);
    void send_bytes(const void* p, std::size_t n, bool count_progress);
    bool read_byte(char& c);
    void lost_connection();
    void throttle(std::size_t n);
    void sink_one_level(const std::string& target, const std::vector<std::string>& patterns, bool first_level);

    int in_;
    int out_;
    legacy_settings s_;
    int errs_ = 0;
    std::atomic<std::uint64_t> progress_{0};
    sftp::progress_meter meter_;
    // -l pacing.
    std::uint64_t paced_bytes_ = 0;
    sftp::transfer_clock::time_point pace_start_{};
    std::string noted_; // the first deferred error of a file (note_err)
    bool utf8_;         // how run_err() shows bytes on stderr
};

} // namespace longhaul::scp
