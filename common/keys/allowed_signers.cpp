#include "common/keys/allowed_signers.hpp"

#include "common/keys/key_lines.hpp"
#include "common/match.hpp"
#include "common/text_parse.hpp"

namespace longhaul {

namespace {

struct signer_options {
    bool cert_authority = false;
    std::optional<std::string> namespaces;
    std::uint64_t valid_after = 0;
    std::uint64_t valid_before = 0;
};

// One parsed line. The key may be a certificate line, which matches only
// that very certificate (OpenSSH's sshkey_equal).
struct signer_line {
    std::string principals;
    std::optional<public_key> key;
    std::optional<certificate> cert;
    signer_options options;
};

enum class line_status { ok, not_found, malformed };

// sshsigopt_parse: nullptr when valid, else OpenSSH's reason.
const char* parse_signer_options(std::string_view text, signer_options& out)
{
    if (text.empty())
        return nullptr;
    auto list = parse_key_options(text);
    if (!list)
        return "unknown key option";
    for (const auto& opt : *list) {
        if (iequals(opt.name, "cert-authority") && !opt.value) {
            out.cert_authority = true;
        } else if (iequals(opt.name, "namespaces") && opt.value) {
            if (out.namespaces)
                return "multiple \"namespaces\" clauses";
            out.namespaces = *opt.value;
        } else if ((iequals(opt.name, "valid-after") || iequals(opt.name, "valid-before")) && opt.value) {
            const bool after = iequals(opt.name, "valid-after");
            std::uint64_t& slot = after ? out.valid_after : out.valid_before;
            if (slot != 0)
                return after ? "multiple \"valid-after\" clauses" : "multiple \"valid-before\" clauses";
            const auto t = parse_absolute_time(*opt.value);
            if (!t || *t == 0)
                return after ? "invalid \"valid-after\" time" : "invalid \"valid-before\" time";
            slot = *t;
        } else {
            return "unknown key option";
        }
    }
    if (out.valid_after != 0 && out.valid_before != 0 && out.valid_before <= out.valid_after)
        return "\"valid-before\" time is before \"valid-after\"";
    return nullptr;
}

// A key, or a certificate, at the start of `text` (the rest is a comment).
bool read_signer_key(std::string_view text, signer_line& out)
{
    if (auto k = parse_public_key_line(text)) {
        out.key = std::move(k->key);
        return true;
    }
    if (auto c = parse_certificate_line(text)) {
        out.cert = std::move(*c);
        return true;
    }
    return false;
}

// parse_principals_key_and_options. `line` keeps its newline, as getline()
// leaves it: where a line ends decides between OpenSSH's "missing key" and
// "invalid key", and is kept for the same messages.
line_status parse_signer_line(std::string_view line, const std::string& where,
                              const std::optional<std::string_view>& required_principal, signer_line& out,
                              std::vector<signers_message>& log)
{
    std::string_view cp = skip_spaces(line);
    if (cp.empty() || cp.front() == '#')
        return line_status::not_found;
    auto fail = [&](const std::string& why) {
        log.push_back({log_level::error, where + ": " + why});
        return line_status::malformed;
    };
    // The principals field: up to a blank, or between double quotes.
    std::string_view principals;
    if (cp.front() == '"') {
        const auto close = cp.find('"', 1);
        if (close == std::string_view::npos)
            return fail("invalid line");
        principals = cp.substr(1, close - 1);
        cp.remove_prefix(close + 1);
    } else {
        std::size_t n = 0;
        while (n < cp.size() && !is_space_char(cp[n]))
            ++n;
        principals = cp.substr(0, n);
        cp.remove_prefix(n);
    }
    if (cp.empty())
        return fail("invalid line");
    cp = skip_spaces(cp);
    out.principals = std::string(principals);
    if (required_principal) {
        if (match_pattern_list(*required_principal, principals, false) != list_match::positive)
            return line_status::not_found;
        log.push_back({log_level::debug1, where + ": matched principal \"" + std::string(*required_principal) + "\""});
    }
    if (read_signer_key(cp, out))
        return line_status::ok;
    const auto n = key_options_length(cp);
    if (!n)
        return fail("invalid options");
    if (*n == cp.size())
        return fail("missing key");
    const std::string_view options = cp.substr(0, *n);
    if (!read_signer_key(skip_spaces(cp.substr(*n + 1)), out))
        return fail("invalid key");
    if (const char* why = parse_signer_options(options, out.options))
        return fail(std::string("bad options: ") + why);
    return line_status::ok;
}

bool same_key(const signer_line& line, const signature_signer& signer)
{
    if (signer.cert)
        return line.cert && line.cert->blob() == signer.cert->blob();
    return line.key && *line.key == signer.key;
}

// cert_filter_principals: the certificate's principals that the line's
// patterns match, for a certificate valid at `now`.
std::optional<std::string> certificate_principals(const certificate& cert, std::string_view patterns,
                                                  std::uint64_t now, const std::string& where,
                                                  std::vector<signers_message>& log)
{
    std::string found;
    while (!patterns.empty()) {
        const auto comma = patterns.find(',');
        const std::string_view pattern = patterns.substr(0, comma);
        patterns = comma == std::string_view::npos ? std::string_view{} : patterns.substr(comma + 1);
        if (pattern.empty())
            break; // strsep's empty field ends the list, as in OpenSSH
        if (auto reason = check_authority(cert, false, true, now, {})) {
            log.push_back({log_level::debug1, where + ": principal \"" + std::string(pattern) +
                                                  "\" not authorized: " + *reason});
            continue;
        }
        for (const auto& p : cert.principals())
            if (match_pattern(p, pattern))
                found += (found.empty() ? "" : ",") + p;
    }
    if (found.empty()) {
        log.push_back({log_level::error, where + ": no valid principals found"});
        return std::nullopt;
    }
    return found;
}

// check_allowed_keys_line once the line parsed: whether it allows the signer.
bool line_allows(signer_line& line, const allowed_signers_query& q, const std::string& where,
                 std::vector<signers_message>& log)
{
    if (!line.options.cert_authority && same_key(line, q.signer)) {
        log.push_back({log_level::debug1, where + ": matched key"});
    } else if (line.options.cert_authority && line.key && q.signer.cert &&
               q.signer.cert->signature_key() == *line.key) {
        const certificate& cert = *q.signer.cert;
        if (q.principal) {
            if (auto reason = check_authority(cert, false, true, q.verify_time, *q.principal)) {
                log.push_back({log_level::error, where + ": certificate not authorized: " + *reason});
                return false;
            }
        } else {
            auto names = certificate_principals(cert, line.principals, q.verify_time, where, log);
            if (!names)
                return false;
            line.principals = std::move(*names);
        }
        log.push_back({log_level::debug1, where + ": matched certificate CA key"});
    } else {
        return false;
    }
    if (line.options.namespaces && q.ns &&
        match_pattern_list(*q.ns, *line.options.namespaces, false) != list_match::positive) {
        log.push_back({log_level::error,
                       where + ": key is not permitted for use in signature namespace \"" + *q.ns + "\""});
        return false;
    }
    if (line.options.valid_after != 0 && q.verify_time < line.options.valid_after) {
        log.push_back({log_level::error, where + ": key is not yet valid: verify time " +
                                             format_absolute_time(q.verify_time) + " < valid-after " +
                                             format_absolute_time(line.options.valid_after)});
        return false;
    }
    if (line.options.valid_before != 0 && q.verify_time > line.options.valid_before) {
        log.push_back({log_level::error, where + ": key has expired: verify time " +
                                             format_absolute_time(q.verify_time) + " > valid-before " +
                                             format_absolute_time(line.options.valid_before)});
        return false;
    }
    return true;
}

// The file's lines with their newlines, numbered from 1.
template <typename F>
void for_each_line(std::string_view contents, F&& f)
{
    unsigned long number = 0;
    while (!contents.empty()) {
        const auto nl = contents.find('\n');
        const std::string_view line = contents.substr(0, nl == std::string_view::npos ? contents.size() : nl + 1);
        contents.remove_prefix(line.size());
        if (!f(line, ++number))
            return;
    }
}

} // namespace

allowed_signers_result check_allowed_signers(std::string_view contents, const allowed_signers_query& q)
{
    allowed_signers_result r;
    std::optional<std::string_view> principal;
    if (q.principal)
        principal = *q.principal;
    for_each_line(contents, [&](std::string_view text, unsigned long number) {
        const std::string where = q.path + ":" + std::to_string(number);
        signer_line line;
        // A malformed line is reported and skipped (check_allowed_keys_line
        // turns every failure into "not found").
        if (parse_signer_line(text, where, principal, line, r.log) != line_status::ok)
            return true;
        if (!line_allows(line, q, where, r.log))
            return true;
        r.found = true;
        r.principals = std::move(line.principals);
        return false;
    });
    return r;
}

principals_list_result match_allowed_principals(std::string_view contents, std::string_view path,
                                                std::string_view principal)
{
    principals_list_result r;
    for_each_line(contents, [&](std::string_view text, unsigned long number) {
        signer_line line;
        switch (parse_signer_line(text, std::string(path) + ":" + std::to_string(number), principal, line, r.log)) {
        case line_status::not_found: return true;
        case line_status::malformed: r.error = true; return false;
        case line_status::ok: break;
        }
        r.principals.push_back(std::move(line.principals));
        return true;
    });
    return r;
}

} // namespace longhaul
