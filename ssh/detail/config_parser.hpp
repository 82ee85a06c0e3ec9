// Internals shared by the ssh_config line parser (config_keywords.cpp) and
// the file reader (config_reader.cpp): the state of one configuration pass
// and OpenSSH's SSHCONF_* flags.
#pragma once

#include "ssh/ssh_config.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace longhaul::detail {

enum config_flags : unsigned {
    conf_user = 1u,        // a user file (~/.ssh/config, -F) or the command line
    conf_check_perm = 2u,  // refuse files others can write
    conf_final = 4u,       // the second ("Match final") pass
    conf_never_match = 8u, // an Include inside an inactive block: parse only
};

// Include depth limit, as OpenSSH's READCONF_MAX_DEPTH.
inline constexpr int max_include_depth = 16;
// Files larger than this are refused rather than read into memory.
inline constexpr std::size_t max_config_file_size = 16u << 20;

struct parse_state {
    client_config& cfg;
    const config_environment& env;
    const log_sink& log;
    std::string host;          // what Host patterns are matched against in this pass
    std::string original_host; // the host as given (Match originalhost, %n)
    bool* want_final_pass = nullptr; // set by "Match final" (first pass only)

    void emit(log_level level, std::string text) const
    {
        if (log)
            log(level, text);
    }
};

// The ssh service port (getservbyname("ssh"), else 22).
int default_ssh_port();

// Processes one line. Returns false for a bad line, already logged (the
// caller counts it). `active` is nullptr for a command-line option.
// Throws ssh_config_error for errors OpenSSH makes fatal.
bool process_config_line(parse_state& st, std::string_view line, std::string_view filename, int linenum,
                         bool* active, unsigned flags, int depth);

// Reads one file. False (with `open_error` set to strerror text) when it
// cannot be opened; throws ssh_config_error for the fatal cases, including the
// final "terminating, N bad configuration options".
bool read_config_file(parse_state& st, const std::string& path, unsigned flags, bool* active, int depth,
                      std::string& open_error);

// The lines of one file already in memory (what read_config_file() does
// after reading it; the fuzzer calls it directly).
void process_config_text(parse_state& st, std::string_view text, const std::string& path, unsigned flags, bool* active,
                         int depth);

// Host / Match / Include lines (config_reader.cpp). `args` are the lexed
// arguments; `raw` the text after the keyword.
bool process_host_line(parse_state& st, const std::vector<std::string>& args, std::string_view filename, int linenum,
                       bool* active, unsigned flags);
bool process_match_line(parse_state& st, const std::vector<std::string>& args, std::string_view filename,
                        int linenum, bool* active, unsigned flags);
bool process_include_line(parse_state& st, const std::vector<std::string>& args, std::string_view filename,
                          int linenum, bool* active, unsigned flags, int depth);

} // namespace longhaul::detail
