#include "common/percent_expand.hpp"

namespace longhaul {

percent_expansion vdollar_percent_expand(std::string_view s, const percent_tokens* tokens, const env_lookup* env)
{
    percent_expansion out;
    std::string& buf = out.text;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (env != nullptr && s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{') {
            const auto start = i + 2;
            const auto end = s.find('}', start);
            if (end == std::string_view::npos) {
                out.reason = "environment variable '" + std::string(s.substr(start)) + "' missing closing '}'";
                return out;
            }
            if (end == start) {
                out.reason = "zero-length environment variable";
                return out;
            }
            const std::string name(s.substr(start, end - start));
            if (auto v = (*env)(name)) {
                buf += *v;
            } else {
                // OpenSSH keeps going so every missing variable is reported; we report the first.
                if (!out.missing_var)
                    out.reason = "env var ${" + name + "} has no value";
                out.missing_var = true;
            }
            i = end;
            continue;
        }
        if (s[i] != '%' || tokens == nullptr) {
            buf.push_back(s[i]);
            continue;
        }
        if (++i >= s.size()) {
            out.reason = "invalid format";
            return out;
        }
        if (s[i] == '%') {
            buf.push_back('%');
            continue;
        }
        bool found = false;
        for (const auto& t : *tokens) {
            if (t.key == s[i]) {
                buf += t.value;
                found = true;
                break;
            }
        }
        if (!found) {
            out.reason = std::string("unknown key %") + s[i];
            return out;
        }
    }
    out.malformed = false;
    return out;
}

result<std::string> percent_expand(std::string_view s, const percent_tokens& tokens, std::string& error)
{
    auto r = vdollar_percent_expand(s, &tokens, nullptr);
    if (r.malformed) {
        // OpenSSH logs "vdollar_percent_expand: <reason>" and then dies with
        // "percent_expand: failed"; sshd here logs one line and skips the
        // setting instead, and names the function its callers know.
        error = "percent_expand: " + r.reason;
        return errc::invalid_argument;
    }
    return std::move(r.text);
}

} // namespace longhaul
