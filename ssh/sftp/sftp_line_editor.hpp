// Interactive input on libedit, as OpenSSH's sftp uses it: the "sftp> "
// prompt, emacs key bindings (and the user's ~/.editrc), history, and
// tab completion of command names, remote paths (through the session:
// a glob of what was typed plus '*') and local paths (glob(3)).
#pragma once

#include "ssh/sftp/sftp_commands.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::sftp_cli {

// The completion logic without libedit, for the tests: what to insert
// after `line` (cursor at its end), and the candidates to list when
// there are several.
struct completion {
    std::string insert;
    std::vector<std::string> listing;
};
completion complete_line(const std::string& line, sftp_shell* shell);

class line_editor {
public:
    explicit line_editor(sftp_shell& shell);
    ~line_editor();
    line_editor(const line_editor&) = delete;
    line_editor& operator=(const line_editor&) = delete;

    // One line (without its newline); nullopt at end of input.
    std::optional<std::string> read();

private:
    struct impl;
    std::unique_ptr<impl> p_;
};

} // namespace longhaul::sftp_cli
