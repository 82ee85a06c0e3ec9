// The ssh subprocess that carries an SFTP session (or a legacy scp -t/-f
// conversation), as OpenSSH's scp and sftp start it: the program (ssh in
// the caller's own directory unless -S names another), options that turn
// off what a file transfer must not get (forwardings, a tty, a local or
// remote command), the user's options, then `-s host sftp` or
// `host command`. Its stdin and stdout are pipes to us; stderr stays the
// user's, so ssh's own messages ("Could not resolve hostname ...") reach
// the terminal as with OpenSSH.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace longhaul::sftp {

// The options the programs pass through to ssh, in the order given.
struct ssh_invocation {
    std::string program;            // -S, or ssh beside this executable
    std::vector<std::string> args;  // -4 -6 -C -c -F -i -o -v -q -oBatchMode ...
};

// The ssh beside the running executable (/proc/self/exe's directory), so
// build/bin/scp uses build/bin/ssh; "ssh" (PATH) when that is not there.
std::string sibling_program(const char* argv0, const char* name);

// OpenSSH's base arguments for a transfer (scp.c and sftp.c's addargs).
std::vector<std::string> transfer_base_args();

class child_process {
public:
    child_process() = default;
    child_process(child_process&& o) noexcept;
    child_process& operator=(child_process&& o) noexcept;
    ~child_process();

    // Starts argv[0] (searched in PATH when it has no '/') with stdin and
    // stdout on pipes. nullopt with `error` set when it cannot start.
    // ignore_sigint: the child ignores SIGINT (sftp's ssh survives a ^C
    // that interrupts one transfer).
    static std::optional<child_process> spawn(const std::vector<std::string>& argv, std::string& error,
                                              bool ignore_sigint = false);
    // Starts argv[0] with `in` as its stdin and `out` as its stdout, the
    // caller's descriptors (it still holds them): scp -3 -O joins the
    // target's ssh to the origin's pipes, as OpenSSH's do_cmd2 does.
    static std::optional<child_process> spawn_joined(const std::vector<std::string>& argv, int in, int out,
                                                     std::string& error);
    // A shell command line (sftp -D "server -args", scp's local cp).
    static std::optional<child_process> spawn_shell(const std::string& command, std::string& error);

    int to_child() const noexcept { return to_; }     // the child's stdin
    int from_child() const noexcept { return from_; } // the child's stdout
    pid_t pid() const noexcept { return pid_; }
    // Closes our ends of the pipes (the child sees EOF).
    void close_pipes() noexcept;
    // Closes only the child's stdin (it sees EOF; its output still comes).
    void close_to_child() noexcept;
    // Waits for the child; its exit status, 128+signal, or -1.
    int wait() noexcept;
    // SIGTERM then wait (an interrupted transfer).
    void terminate() noexcept;

private:
    pid_t pid_ = -1;
    int to_ = -1;
    int from_ = -1;
};

// ssh [base] [user args] [-p port] [-l user] [-s] -- host command
std::vector<std::string> ssh_command_line(const ssh_invocation& inv, const std::string& host,
                                          const std::string& user, int port, bool subsystem,
                                          const std::string& command);

} // namespace longhaul::sftp
