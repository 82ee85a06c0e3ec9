// The ssh_config keywords whose handling is more than one of line_parser's
// shared parsers, outside the keyword switch of config_keywords.cpp: each
// takes the line's arguments from `p` and returns what the switch returns
// for it (false: an error was reported). Internal to ssh's config parser.
#pragma once

#include "ssh/detail/config_keywords.hpp"
#include "ssh/detail/line_parser.hpp"

namespace longhaul::detail {

// What a session forwards and carries (config_keywords_session.cpp).
bool forward_keyword(line_parser& p, kw op); // LocalForward, RemoteForward, DynamicForward
bool permit_remote_open_keyword(line_parser& p);
bool send_env_keyword(line_parser& p);
bool set_env_keyword(line_parser& p);
bool tunnel_device_keyword(line_parser& p);
bool escape_char_keyword(line_parser& p);
bool control_persist_keyword(line_parser& p);
bool add_keys_to_agent_keyword(line_parser& p);

// Hostname canonicalization (config_keywords_canonical.cpp).
bool canonical_domains_keyword(line_parser& p);
bool canonicalize_permitted_cnames_keyword(line_parser& p);

} // namespace longhaul::detail
