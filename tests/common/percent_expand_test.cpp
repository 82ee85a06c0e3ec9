#include "common/percent_expand.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

const env_lookup test_env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "HOME")
        return "/home/u";
    return std::nullopt;
};

} // namespace

TEST_CASE("percent_expand: tokens")
{
    const percent_tokens t = {{'h', "/home/alice"}, {'u', "alice"}, {'U', "1001"}};
    std::string err;
    CHECK(percent_expand("%h/.ssh/authorized_keys", t, err).value() == "/home/alice/.ssh/authorized_keys");
    CHECK(percent_expand("/etc/%u.%U.100%%", t, err).value() == "/etc/alice.1001.100%");
    CHECK(percent_expand("", t, err).value() == "");
    CHECK(percent_expand("${HOME}", t, err).value() == "${HOME}");
    CHECK_FALSE(percent_expand("/x/%q", t, err));
    CHECK(err == "percent_expand: unknown key %q");
    CHECK_FALSE(percent_expand("abc%", t, err));
    CHECK(err == "percent_expand: invalid format");
}

TEST_CASE("percent_expand: vdollar_percent_expand")
{
    const percent_tokens t = {{'u', "alice"}};
    auto r = vdollar_percent_expand("${HOME}/%u", &t, &test_env);
    CHECK_FALSE(r.malformed);
    CHECK_FALSE(r.missing_var);
    CHECK(r.text == "/home/u/alice");

    // Without tokens '%' is plain text; without an environment so is "${".
    r = vdollar_percent_expand("%u ${HOME}", nullptr, nullptr);
    CHECK(r.text == "%u ${HOME}");

    r = vdollar_percent_expand("${NOPE}/${ALSO}", &t, &test_env);
    CHECK_FALSE(r.malformed);
    CHECK(r.missing_var);
    CHECK(r.reason == "env var ${NOPE} has no value");

    CHECK(vdollar_percent_expand("${}", &t, &test_env).reason == "zero-length environment variable");
    CHECK(vdollar_percent_expand("${HOME", &t, &test_env).reason == "environment variable 'HOME' missing closing '}'");
    CHECK(vdollar_percent_expand("%x", &t, &test_env).reason == "unknown key %x");
    CHECK(vdollar_percent_expand("%", &t, &test_env).malformed);
}
