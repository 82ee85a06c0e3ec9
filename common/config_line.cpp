#include "common/config_line.hpp"

#include "common/text_parse.hpp"

#include <cctype>
#include <limits>
#include <optional>

namespace longhaul {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f'; }

} // namespace

result<std::vector<std::string>> split_arguments(std::string_view s, bool stop_at_comment)
{
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && is_space(s[i]))
            ++i;
        if (i >= s.size())
            break;
        if (stop_at_comment && s[i] == '#')
            break;
        std::string arg;
        char quote = 0;
        for (; i < s.size(); ++i) {
            char c = s[i];
            // As OpenSSH's argv_split: a backslash escapes a quote of either
            // kind or a backslash anywhere, and a space outside quotes; any
            // other backslash is literal.
            if (c == '\\' && i + 1 < s.size() &&
                (s[i + 1] == '\'' || s[i + 1] == '"' || s[i + 1] == '\\' || (quote == 0 && s[i + 1] == ' '))) {
                arg.push_back(s[++i]);
                continue;
            }
            if (quote == 0 && is_space(c))
                break;
            if (quote == 0 && (c == '"' || c == '\'')) {
                quote = c;
            } else if (c == quote) {
                quote = 0;
            } else {
                arg.push_back(c);
            }
        }
        if (quote != 0)
            return errc::malformed;
        out.push_back(std::move(arg));
    }
    return out;
}

namespace {

bool is_delimiter_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// OpenSSH's strdelim(): a token ends at whitespace, '"' or '='; a token
// reaching a '"' runs on to the next '"'. Whitespace and at most one '='
// after it are skipped. nullopt for an unterminated quote.
std::optional<std::string> next_keyword_token(std::string_view line, std::size_t& i)
{
    const std::size_t start = i;
    std::size_t p = i;
    while (p < line.size() && !is_delimiter_space(line[p]) && line[p] != '"' && line[p] != '=')
        ++p;
    std::string token(line.substr(start, p - start));
    if (p >= line.size()) {
        i = line.size();
        return token;
    }
    if (line[p] == '"') {
        const auto q = line.find('"', p + 1);
        if (q == std::string_view::npos)
            return std::nullopt;
        token.append(line.substr(p + 1, q - p - 1));
        i = q + 1;
        while (i < line.size() && is_delimiter_space(line[i]))
            ++i;
        return token;
    }
    const bool was_equals = line[p] == '=';
    i = p + 1;
    while (i < line.size() && is_delimiter_space(line[i]))
        ++i;
    if (!was_equals && i < line.size() && line[i] == '=') {
        ++i;
        while (i < line.size() && is_delimiter_space(line[i]))
            ++i;
    }
    return token;
}

// The keyword token and the position of the rest, as OpenSSH finds them:
// a line starting with blanks or one '=' has an empty first token and the
// keyword is the second. nullopt for blank and comment lines and for the
// lines OpenSSH silently ignores (an unterminated quote in the keyword).
std::optional<std::string> keyword_token(std::string_view line, std::size_t& i)
{
    i = 0;
    auto token = next_keyword_token(line, i);
    if (token && token->empty())
        token = next_keyword_token(line, i);
    if (!token || token->empty() || (*token)[0] == '#')
        return std::nullopt;
    *token = lowercase(*token);
    return token;
}

std::string_view trim_line(std::string_view line)
{
    // Trailing whitespace (and a CR from a DOS file) is not part of the line.
    while (!line.empty() && is_space(line.back()))
        line.remove_suffix(1);
    return line;
}

} // namespace

std::optional<std::string> config_line_keyword(std::string_view line)
{
    std::size_t i = 0;
    return keyword_token(trim_line(line), i);
}

result<config_line> lex_config_line(std::string_view line, std::string& error)
{
    config_line out;
    line = trim_line(line);
    std::size_t i = 0;
    auto keyword = keyword_token(line, i);
    if (!keyword)
        return out;
    out.keyword = std::move(*keyword);
    out.empty = false;
    out.value = std::string(line.substr(i));
    if (i >= line.size()) {
        error = "no argument after keyword \"" + out.keyword + "\"";
        return errc::malformed;
    }
    auto args = split_arguments(line.substr(i));
    if (!args) {
        error = "invalid quotes";
        return errc::malformed;
    }
    out.args = std::move(*args);
    if (out.args.empty()) {
        error = "no argument after keyword \"" + out.keyword + "\"";
        return errc::malformed;
    }
    return out;
}

result<bool> parse_yes_no(std::string_view v)
{
    if (v == "yes" || v == "true")
        return true;
    if (v == "no" || v == "false")
        return false;
    return errc::malformed;
}

long long time_unit_seconds(char unit) noexcept
{
    switch (unit) {
    case 's': case 'S': return 1;
    case 'm': case 'M': return 60;
    case 'h': case 'H': return 60 * 60;
    case 'd': case 'D': return 24 * 60 * 60;
    case 'w': case 'W': return 7 * 24 * 60 * 60;
    default: return 0;
    }
}

result<long long> parse_time_interval(std::string_view v)
{
    if (v.empty())
        return errc::malformed;
    long long total = 0, current = 0;
    bool have_digits = false;
    for (char c : v) {
        if (c >= '0' && c <= '9') {
            if (current > (std::numeric_limits<int>::max() - (c - '0')) / 10)
                return errc::too_large;
            current = current * 10 + (c - '0');
            have_digits = true;
            continue;
        }
        if (!have_digits)
            return errc::malformed;
        const long long mult = time_unit_seconds(c);
        if (mult == 0)
            return errc::malformed;
        total += current * mult;
        if (total > std::numeric_limits<int>::max())
            return errc::too_large;
        current = 0;
        have_digits = false;
    }
    total += current;
    if (total > std::numeric_limits<int>::max())
        return errc::too_large;
    return total;
}

} // namespace longhaul
