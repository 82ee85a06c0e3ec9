// Internal to the sshd_config parser: the small value syntaxes OpenSSH
// parses by hand (host:port, sscanf-style numbers, scaled sizes, method
// and channel-timeout lists).
#pragma once

#include "common/text_parse.hpp"
#include "sshd/sshd_algorithms.hpp"
#include "sshd/sshd_config_internal.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace longhaul::detail {

// sscanf("%d:%d:%d")-like: how many integers were read before a mismatch.
int scan_ints(std::string_view s, int* out, int max);
bool valid_channel_timeout(std::string_view s);
// auth2_methods_valid; logs OpenSSH's error line on failure.
bool valid_auth_method_list(std::string_view list, parse_log& log);
bool valid_gss_kex(std::string_view list, parse_log& log);
// The first name of a list OpenSSH does not know (for its message).
std::string first_unknown(sshd_algorithm_list kind, std::string_view spec);

} // namespace longhaul::detail
