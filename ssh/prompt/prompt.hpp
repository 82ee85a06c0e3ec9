// Asking the user: passwords and passphrases on /dev/tty without echo,
// yes/no questions with echo, or SSH_ASKPASS when there is no terminal, as
// OpenSSH's read_passphrase() does.
#pragma once

#include "common/bytes.hpp"

#include <optional>
#include <string>

namespace longhaul {

enum class prompt_echo { off, on };

// nullopt: no terminal and no askpass, or the user ended input.
std::optional<secret_bytes> read_passphrase(const std::string& prompt, prompt_echo echo, bool allow_askpass = true);
std::optional<std::string> read_line(const std::string& prompt);

// Runs the askpass `program` with `prompt` as its argument (and
// SSH_ASKPASS_PROMPT=hint when given) and returns the first line it
// prints; nullopt when it cannot run or exits with a failure. For callers
// that choose between askpass and the terminal themselves (ssh-add).
std::optional<secret_bytes> run_askpass(const std::string& prompt, const char* program, const char* hint = nullptr);

// Starts the askpass `program` with `prompt` as its argument (and
// SSH_ASKPASS_PROMPT=hint when given). Its standard output is `stdout_fd`
// (where the answer is read), or with stdout_fd < 0 it shows a notice and
// nothing is read: standard input and output are /dev/null. Signals are
// blocked across fork until the child has reset the handlers it inherited,
// so one that arrives (the notice is ended with SIGTERM) before exec never
// runs the caller's handlers in the child. The child's pid, or -1 with
// errno set.
int spawn_askpass(const char* program, const std::string& prompt, const char* hint, int stdout_fd);

// Whether an askpass program could be seen: a display (DISPLAY, or also
// WAYLAND_DISPLAY when `wayland`; OpenSSH 9.2's agent looks at DISPLAY
// alone), or SSH_ASKPASS_REQUIRE=force; never with SSH_ASKPASS_REQUIRE=never.
bool askpass_displayable(bool wayland);
// $SSH_ASKPASS when set and not empty, else Debian's /usr/bin/ssh-askpass.
const char* askpass_program();

// OpenSSH's ask_permission() (a master under ControlMaster ask/autoask):
// the askpass program (SSH_ASKPASS, else /usr/bin/ssh-askpass) asked with
// SSH_ASKPASS_PROMPT=confirm, and only where a display could show it
// (DISPLAY or WAYLAND_DISPLAY, or SSH_ASKPASS_REQUIRE=force; never with
// SSH_ASKPASS_REQUIRE=never). An empty answer or "yes" allows; anything
// else, a failed program or no display refuses.
bool ask_permission(const std::string& prompt);

} // namespace longhaul
