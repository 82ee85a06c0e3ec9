#include "common/name_list.hpp"

namespace longhaul {

std::vector<std::string_view> split_name_list(std::string_view list)
{
    std::vector<std::string_view> out;
    while (!list.empty()) {
        auto comma = list.find(',');
        auto name = list.substr(0, comma);
        if (!name.empty())
            out.push_back(name);
        if (comma == std::string_view::npos)
            break;
        list.remove_prefix(comma + 1);
    }
    return out;
}

template <class T>
static std::string join_impl(const std::vector<T>& names)
{
    std::string out;
    for (const auto& n : names) {
        if (!out.empty())
            out.push_back(',');
        out.append(n);
    }
    return out;
}

std::string join_name_list(const std::vector<std::string>& names) { return join_impl(names); }
std::string join_name_list(const std::vector<std::string_view>& names) { return join_impl(names); }

bool name_list_contains(std::string_view list, std::string_view name)
{
    for (auto n : split_name_list(list))
        if (n == name)
            return true;
    return false;
}

std::optional<std::string_view> negotiate(std::string_view client_list, std::string_view server_list)
{
    auto server = split_name_list(server_list);
    for (auto c : split_name_list(client_list))
        for (auto s : server)
            if (c == s)
                return c;
    return std::nullopt;
}

} // namespace longhaul
