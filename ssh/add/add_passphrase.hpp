// ssh-add's passphrase prompts: OpenSSH's read_passphrase(RP_ALLOW_STDIN).
// Unlike ssh's prompts (ssh/prompt/prompt.hpp), a standard input that is not a
// terminal turns to askpass where a display allows it, and with neither a
// terminal nor askpass the passphrase is read from standard input (the
// prompt on stderr), so that `echo pass | setsid ssh-add key` works as it
// does with OpenSSH.
#pragma once

#include "common/bytes.hpp"

#include <string>

namespace longhaul::add {

// Which way a prompt goes, from the environment and whether standard input
// is a terminal: pure, so that it is unit-tested.
struct passphrase_route {
    bool askpass = false;
    std::string program; // the askpass program when askpass is true
};
passphrase_route choose_passphrase_route(const char* display, const char* wayland_display, const char* askpass_require,
                                         const char* askpass, bool stdin_is_tty);

// The answer; empty when the user gave none or askpass failed (OpenSSH
// then gets "").
secret_bytes read_passphrase_allow_stdin(const std::string& prompt);

} // namespace longhaul::add
