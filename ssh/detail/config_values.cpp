#include "ssh/detail/config_values.hpp"

#include <array>
#include <cctype>

namespace longhaul::detail {

namespace {

constexpr state_word<bool> flag_table[] = {{"true", true}, {"false", false}, {"yes", true}, {"no", false}};

constexpr state_word<strict_host_key_checking> strict_table[] = {
    {"true", strict_host_key_checking::yes},   {"false", strict_host_key_checking::off},
    {"yes", strict_host_key_checking::yes},    {"no", strict_host_key_checking::off},
    {"ask", strict_host_key_checking::ask},    {"off", strict_host_key_checking::off},
    {"accept-new", strict_host_key_checking::accept_new},
};

constexpr state_word<yes_no_ask> yes_no_ask_table[] = {
    {"true", yes_no_ask::yes}, {"false", yes_no_ask::no}, {"yes", yes_no_ask::yes},
    {"no", yes_no_ask::no},    {"ask", yes_no_ask::ask},
};

constexpr state_word<add_keys_to_agent> add_keys_table[] = {
    {"true", add_keys_to_agent::yes}, {"false", add_keys_to_agent::no}, {"yes", add_keys_to_agent::yes},
    {"no", add_keys_to_agent::no},    {"ask", add_keys_to_agent::ask},  {"confirm", add_keys_to_agent::confirm},
};

constexpr state_word<address_family> address_family_table[] = {
    {"inet", address_family::inet}, {"inet6", address_family::inet6}, {"any", address_family::any}};

constexpr state_word<control_master> control_master_table[] = {
    {"true", control_master::yes},      {"yes", control_master::yes}, {"false", control_master::no},
    {"no", control_master::no},         {"auto", control_master::automatic}, {"ask", control_master::ask},
    {"autoask", control_master::autoask},
};

constexpr state_word<tunnel_request> tunnel_table[] = {
    {"ethernet", tunnel_request::ethernet}, {"point-to-point", tunnel_request::point_to_point},
    {"true", tunnel_request::point_to_point}, {"yes", tunnel_request::point_to_point},
    {"false", tunnel_request::no},          {"no", tunnel_request::no},
};

constexpr state_word<request_tty> request_tty_table[] = {
    {"true", request_tty::yes}, {"yes", request_tty::yes},     {"false", request_tty::no},
    {"no", request_tty::no},    {"force", request_tty::force}, {"auto", request_tty::automatic},
};

constexpr state_word<session_type> session_type_table[] = {
    {"none", session_type::none}, {"subsystem", session_type::subsystem}, {"default", session_type::normal}};

constexpr state_word<canonicalize_hostname> canonicalize_table[] = {
    {"true", canonicalize_hostname::yes}, {"false", canonicalize_hostname::no},
    {"yes", canonicalize_hostname::yes},  {"no", canonicalize_hostname::no},
    {"always", canonicalize_hostname::always},
};

constexpr state_word<pubkey_authentication> pubkey_table[] = {
    {"true", pubkey_authentication::all},       {"false", pubkey_authentication::no},
    {"yes", pubkey_authentication::all},        {"no", pubkey_authentication::no},
    {"unbound", pubkey_authentication::unbound}, {"host-bound", pubkey_authentication::host_bound},
};

constexpr state_word<bool> compression_table[] = {{"yes", true}, {"no", false}};

constexpr state_word<key_fingerprint_hash> fingerprint_table[] = {
    {"MD5", key_fingerprint_hash::md5},       {"SHA1", key_fingerprint_hash::sha1},
    {"SHA256", key_fingerprint_hash::sha256}, {"SHA384", key_fingerprint_hash::sha384},
    {"SHA512", key_fingerprint_hash::sha512},
};

constexpr std::string_view facilities[] = {"DAEMON", "USER",   "AUTH",   "AUTHPRIV", "LOCAL0", "LOCAL1",
                                           "LOCAL2", "LOCAL3", "LOCAL4", "LOCAL5",   "LOCAL6", "LOCAL7"};

} // namespace

std::span<const state_word<bool>> flag_words() { return flag_table; }
std::span<const state_word<strict_host_key_checking>> strict_host_key_words() { return strict_table; }
std::span<const state_word<yes_no_ask>> yes_no_ask_words() { return yes_no_ask_table; }
std::span<const state_word<add_keys_to_agent>> add_keys_words() { return add_keys_table; }
std::span<const state_word<address_family>> address_family_words() { return address_family_table; }
std::span<const state_word<control_master>> control_master_words() { return control_master_table; }
std::span<const state_word<tunnel_request>> tunnel_words() { return tunnel_table; }
std::span<const state_word<request_tty>> request_tty_words() { return request_tty_table; }
std::span<const state_word<session_type>> session_type_words() { return session_type_table; }
std::span<const state_word<canonicalize_hostname>> canonicalize_words() { return canonicalize_table; }
std::span<const state_word<pubkey_authentication>> pubkey_auth_words() { return pubkey_table; }
std::span<const state_word<bool>> compression_words() { return compression_table; }
std::span<const state_word<key_fingerprint_hash>> fingerprint_hash_words() { return fingerprint_table; }

std::optional<std::string> parse_syslog_facility(std::string_view s)
{
    for (auto f : facilities)
        if (iequals(f, s))
            return std::string(f);
    return std::nullopt;
}

std::string format_escape_char(int c)
{
    if (c == escape_char_none)
        return "none";
    c &= 0xff;
    const bool graphic = c < 0x80 && std::isgraph(c);
    if (graphic)
        return c == '\\' ? std::string("\\\\") : std::string(1, static_cast<char>(c)); // vis() doubles a backslash
    std::string out = "\\";
    if ((c & 0x7f) == ' ') {
        // Spaces are written in octal.
        out.push_back(static_cast<char>('0' + ((c >> 6) & 7)));
        out.push_back(static_cast<char>('0' + ((c >> 3) & 7)));
        out.push_back(static_cast<char>('0' + (c & 7)));
        return out;
    }
    if (c & 0x80) {
        c &= 0x7f;
        out.push_back('M');
    }
    if (std::iscntrl(c)) {
        out.push_back('^');
        out.push_back(c == 0x7f ? '?' : static_cast<char>(c + '@'));
    } else {
        out.push_back('-');
        out.push_back(static_cast<char>(c));
    }
    return out;
}

} // namespace longhaul::detail
