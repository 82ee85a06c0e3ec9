// The ssh_config keywords of hostname canonicalization with lists of their
// own syntax: CanonicalDomains and CanonicalizePermittedCNAMEs (the
// single-valued ones are line_parser's shared parsers, in
// config_keywords.cpp's switch).
#include "ssh/detail/config_keyword_handlers.hpp"

#include "common/text_parse.hpp"
#include "ssh/destination.hpp"

#include <cctype>

namespace longhaul::detail {

namespace {

// As OpenSSH's MAX_CANON_DOMAINS, for both lists.
constexpr std::size_t max_canonical_domains = 32;

} // namespace

bool canonical_domains_keyword(line_parser& p)
{
    auto& c = p.cfg();
    const bool already = !c.canonical_domains.empty();
    std::size_t i = 0;
    while (const std::string* arg = p.next()) {
        if (arg->empty())
            return p.fail("keyword " + p.keyword() + " empty argument");
        if (iequals(*arg, "none") && (i > 0 || p.left() > 0))
            return p.fail("keyword " + p.keyword() + " \"none\" argument must appear alone.");
        ++i;
        if (!iequals(*arg, "none") && !valid_domain(*arg)) {
            std::string why;
            const std::string shown = arg->substr(0, 100);
            if (!std::isalnum(static_cast<unsigned char>((*arg)[0])))
                why = "domain name \"" + shown + "\" starts with invalid character";
            else if (arg->back() == '.')
                why = "domain name \"" + shown + "\" ends with invalid character";
            else if (arg->find("..") != std::string::npos)
                why = "domain name \"" + shown + "\" contains consecutive separators";
            else
                why = "domain name \"" + shown + "\" contains invalid characters";
            return p.fail(why);
        }
        if (!p.active() || already)
            continue;
        if (c.canonical_domains.size() >= max_canonical_domains)
            return p.fail("too many hostname suffixes.");
        c.canonical_domains.push_back(*arg);
    }
    return true;
}

bool canonicalize_permitted_cnames_keyword(line_parser& p)
{
    auto& c = p.cfg();
    const bool already = !c.canonicalize_permitted_cnames.empty();
    std::size_t i = 0;
    while (const std::string* arg = p.next()) {
        permitted_cname rule;
        if (iequals(*arg, "none")) {
            if (i > 0 || p.left() > 0)
                return p.fail("keyword " + p.keyword() + " \"none\" argument must appear alone.");
            rule = {*arg, ""};
        } else if (*arg == "*") {
            rule = {*arg, *arg};
        } else {
            const std::string lower = lowercase(*arg);
            const auto colon = lower.find(':');
            if (colon == std::string::npos || colon + 1 == lower.size())
                return p.fail("Invalid permitted CNAME \"" + lower + "\"");
            rule = {lower.substr(0, colon), lower.substr(colon + 1)};
        }
        ++i;
        if (!p.active() || already)
            continue;
        if (c.canonicalize_permitted_cnames.size() >= max_canonical_domains)
            return p.fail("too many permitted CNAMEs.");
        c.canonicalize_permitted_cnames.push_back(std::move(rule));
    }
    return true;
}

} // namespace longhaul::detail
