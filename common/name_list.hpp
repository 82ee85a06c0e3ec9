// Algorithm name-lists: splitting, joining and RFC 4253 §7.1 negotiation.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// Splits a comma-separated name-list; empty elements are skipped.
std::vector<std::string_view> split_name_list(std::string_view list);
std::string join_name_list(const std::vector<std::string>& names);
std::string join_name_list(const std::vector<std::string_view>& names);
bool name_list_contains(std::string_view list, std::string_view name);

// The first algorithm on the client's list that the server also supports.
std::optional<std::string_view> negotiate(std::string_view client_list, std::string_view server_list);

} // namespace longhaul
