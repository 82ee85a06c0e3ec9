#include "common/auth/methods_list.hpp"

#include "common/name_list.hpp"

#include <algorithm>

namespace longhaul {

method_match list_starts_with(std::string_view list, std::string_view method, std::string_view submethod)
{
    if (list.substr(0, method.size()) != method)
        return method_match::none;
    std::string_view rest = list.substr(method.size());
    method_match match = method_match::method;
    if (!rest.empty() && rest.front() == ':') {
        if (submethod.empty())
            return method_match::partial;
        rest.remove_prefix(1);
        if (rest.substr(0, submethod.size()) != submethod)
            return method_match::none;
        rest.remove_prefix(submethod.size());
        match = method_match::both;
    }
    if (!rest.empty() && rest.front() != ',')
        return method_match::none;
    return match;
}

bool remove_leading_method(std::string& list, std::string_view method, std::string_view submethod)
{
    const auto match = list_starts_with(list, method, submethod);
    if (match != method_match::method && match != method_match::both)
        return false;
    std::size_t n = method.size();
    if (match == method_match::both)
        n += 1 + submethod.size();
    if (n < list.size() && list[n] == ',')
        ++n;
    list.erase(0, n);
    return true;
}

const std::vector<std::string_view>& known_auth_methods()
{
    static const std::vector<std::string_view> names = {"none", "publickey", "gssapi-with-mic", "password",
                                                        "keyboard-interactive", "hostbased"};
    return names;
}

std::string check_methods_list(std::string_view list, const std::function<bool(std::string_view)>& is_enabled)
{
    if (list.empty())
        return "empty authentication method list";
    const auto& known = known_auth_methods();
    std::size_t pos = 0;
    for (;;) {
        const std::size_t comma = list.find(',', pos);
        std::string_view entry = list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        std::string_view name = entry.substr(0, entry.find(':'));
        if (std::find(known.begin(), known.end(), name) == known.end())
            return "Unknown authentication method \"" + std::string(name) + "\" in list";
        if (is_enabled && !is_enabled(name))
            return "Disabled method \"" + std::string(name) + "\" in AuthenticationMethods list \"" +
                   std::string(list) + "\"";
        if (comma == std::string_view::npos)
            break;
        pos = comma + 1;
    }
    return {};
}

void auth_methods_lists::setup(const std::vector<std::string>& configured,
                               const std::function<bool(std::string_view)>& is_enabled,
                               std::vector<std::string>* skipped)
{
    lists_.clear();
    active_ = !(configured.empty() || (configured.size() == 1 && configured[0] == "any"));
    if (!active_)
        return;
    for (const auto& l : configured) {
        if (check_methods_list(l, is_enabled).empty())
            lists_.push_back(l);
        else if (skipped != nullptr)
            skipped->push_back(l);
    }
}

bool auth_methods_lists::allowed(std::string_view method, std::string_view submethod) const
{
    if (!active_)
        return true;
    return std::any_of(lists_.begin(), lists_.end(), [&](const std::string& l) {
        return list_starts_with(l, method, submethod) != method_match::none;
    });
}

bool auth_methods_lists::update(std::string_view method, std::string_view submethod)
{
    for (auto& l : lists_) {
        if (!remove_leading_method(l, method, submethod))
            continue;
        if (l.empty())
            return true;
    }
    return false;
}

} // namespace longhaul
