// Value vocabularies of ssh_config keywords: the accepted words of each
// multi-state option (parsed case-insensitively; `ssh -G` prints the first
// word listed for a value, which is why "yes" prints as "true" for some
// keywords), IPQoS names, syslog facilities and the escape-character
// notation of -G.
#pragma once

#include "common/text_parse.hpp"
#include "ssh/client_config.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace longhaul::detail {

template <class T>
struct state_word {
    std::string_view word;
    T value;
};

template <class T>
std::optional<T> parse_word(std::span<const state_word<T>> table, std::string_view word)
{
    for (const auto& w : table)
        if (iequals(w.word, word))
            return w.value;
    return std::nullopt;
}

template <class T>
std::string_view format_word(std::span<const state_word<T>> table, T value)
{
    for (const auto& w : table)
        if (w.value == value)
            return w.word;
    return "UNKNOWN";
}

std::span<const state_word<bool>> flag_words();
std::span<const state_word<strict_host_key_checking>> strict_host_key_words();
std::span<const state_word<yes_no_ask>> yes_no_ask_words();
std::span<const state_word<add_keys_to_agent>> add_keys_words();
std::span<const state_word<address_family>> address_family_words();
std::span<const state_word<control_master>> control_master_words();
std::span<const state_word<tunnel_request>> tunnel_words();
std::span<const state_word<request_tty>> request_tty_words();
std::span<const state_word<session_type>> session_type_words();
std::span<const state_word<canonicalize_hostname>> canonicalize_words();
std::span<const state_word<pubkey_authentication>> pubkey_auth_words();
std::span<const state_word<bool>> compression_words();
std::span<const state_word<key_fingerprint_hash>> fingerprint_hash_words();

// SyslogFacility names (DAEMON, USER, AUTH, AUTHPRIV, LOCAL0..7), returned uppercase.
std::optional<std::string> parse_syslog_facility(std::string_view s);

// The escape character as `ssh -G` prints it (vis(3) with VIS_WHITE).
std::string format_escape_char(int c);

} // namespace longhaul::detail
