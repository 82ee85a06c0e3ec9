// Internal to the sshd_config parser: the "draft" a layer of configuration
// is parsed into, the flattened lines with their Match context, and the
// functions shared by the parser's source files.
#pragma once

#include "sshd/sshd_config.hpp"
#include "sshd/sshd_config_keywords.hpp"

#include <bitset>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::detail {

// Match conditions of one "Match" line: attribute/argument pairs, ANDed.
struct match_criterion {
    std::string attribute; // lowercase: all, user, group, host, address, localaddress, localport, rdomain
    std::string argument;
};
struct match_condition {
    std::vector<match_criterion> criteria;
    int line = 0;
    std::vector<int> parents; // conditions of the including files, decided first
};

// One configuration line, with the Match conditions it sits under (the
// including files' conditions first). Empty `conditions`: global.
struct config_entry {
    const sshd_keyword* keyword = nullptr;
    std::string file;
    int line = 0;
    std::string keyword_text; // as written, for messages
    std::vector<std::string> args;
    std::string rest;         // the raw text after the keyword separator
    std::vector<int> conditions; // indexes into the condition table
};

struct listen_spec {
    std::string host; // empty: every address
    int port = 0;     // 0: every Port
    std::string rdomain;
};

// Where a list-valued or late-checked setting came from ("file line N").
struct spec_origin {
    std::string spec;
    std::string where;
};

// One layer of parsed values. `seen` implements first-value-wins within the
// layer; list keywords replace the inherited value on their first
// occurrence in the layer.
struct config_draft {
    server_config cfg;
    std::bitset<static_cast<std::size_t>(sshd_kw::count_)> seen;
    bool match_layer = false;
    bool ports_from_command_line = false;
    bool rekey_interval_seen = false; // RekeyLimit's second value has its own first-wins
    unsigned penalty_fields_seen = 0;  // PerSourcePenalties: first value wins per field
    std::vector<listen_spec> listen;
    spec_origin ciphers, macs, kex, host_key_algorithms, pubkey_algorithms, hostbased_algorithms, ca_algorithms;
};

// Messages in the order OpenSSH prints them; errors are counted per file.
struct parse_log {
    std::vector<config_notice> messages;
    [[noreturn]] void fatal(const std::string& text) const;
    void error(std::string text) { messages.push_back({syslog_level::error, std::move(text)}); }
    void info(std::string text) { messages.push_back({syslog_level::info, std::move(text)}); }
};

struct line_context {
    const config_entry& entry;
    bool active;       // apply the value, or check its syntax only
    bool command_line; // an -o option
    bool reprocess = false; // evaluated for a connection: OpenSSH names the file "reprocess config"
};

// Applies (or checks) one line. Returns false for a non-fatal error that
// counts towards "terminating, N bad configuration options"; throws
// config_error for OpenSSH's fatal() cases. Include and Match are the
// loader's business and never reach here.
bool apply_entry(const line_context& ctx, config_draft& draft, parse_log& log);

// Fills what depends on the whole layer (default ports and host keys,
// "none" values, algorithm lists, listen addresses when `resolve`).
void finalize_draft(config_draft& draft, bool resolve, parse_log& log);

// Match lines.
match_condition parse_match_line(const config_entry& entry, parse_log& log);
// nullopt when the criteria cannot be decided without a connection (at
// load time only "all" decides).
bool match_condition_at_load(const match_condition& c);
// Throws config_error where OpenSSH is fatal (test mode missing lport).
bool match_condition_for(const match_condition& c, const connection_info& info);

// OpenSSH's tilde_expand_filename and derelativise_path.
std::string tilde_expand(const std::string& path);
std::string derelativise_path(const std::string& path);

} // namespace longhaul::detail
