#include "sshd/percent_expand.hpp"

namespace longhaul {

result<std::string> percent_expand(std::string_view s, const std::vector<percent_token>& tokens, std::string& error)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out.push_back(s[i]);
            continue;
        }
        if (++i >= s.size()) {
            error = "percent_expand: invalid format";
            return errc::invalid_argument;
        }
        if (s[i] == '%') {
            out.push_back('%');
            continue;
        }
        bool found = false;
        for (const auto& t : tokens) {
            if (t.key == s[i]) {
                out += t.value;
                found = true;
                break;
            }
        }
        if (!found) {
            error = std::string("percent_expand: unknown key %") + s[i];
            return errc::invalid_argument;
        }
    }
    return out;
}

} // namespace longhaul
