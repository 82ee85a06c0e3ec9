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

} // namespace longhaul
