#include "common/match.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace longhaul;

TEST_CASE("match: wildcards")
{
    CHECK(match_pattern("example.org", "*.org"));
    CHECK(match_pattern("example.org", "ex?mple.*"));
    CHECK(match_pattern("", "*"));
    CHECK_FALSE(match_pattern("example.org", "*.com"));
    CHECK(match_pattern("aaaaaaaaaaaaaaaaaaaaaaaab", "*a*a*a*a*a*a*b"));
    CHECK_FALSE(match_pattern(std::string(5000, 'a'), "*a*a*a*a*a*a*b"));
}

TEST_CASE("match: lists with negation and case folding")
{
    CHECK(match_hostname("Web1.Example.ORG", "*.example.org") == list_match::positive);
    CHECK(match_hostname("web1.example.org", "*.example.org,!web1.*") == list_match::negated);
    CHECK(match_hostname("db.example.org", "*.example.org,!web1.*") == list_match::positive);
    CHECK(match_pattern_list("Bob", "bob", false) == list_match::none);
    CHECK(match_pattern_list("x", "", false) == list_match::none);
}

TEST_CASE("match: address lists with CIDR")
{
    bool ok = false;
    CHECK(match_address_list("192.168.1.20", "10.0.0.0/8,192.168.1.0/24", ok) == list_match::positive);
    CHECK(ok);
    CHECK(match_address_list("192.168.1.20", "192.168.0.0/16,!192.168.1.20", ok) == list_match::negated);
    CHECK(match_address_list("2001:db8::5", "2001:db8::/32", ok) == list_match::positive);
    CHECK(match_address_list("127.0.0.1", "127.0.0.*", ok) == list_match::positive);
    CHECK(match_address_list("127.0.0.1", "10.1.2.3/8", ok) == list_match::none);
    CHECK_FALSE(ok); // host bits set
    CHECK(valid_cidr("10.0.0.0/8"));
    CHECK_FALSE(valid_cidr("10.0.0.0/33"));
    CHECK_FALSE(valid_cidr("banana"));
}
