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
    // Each list as sshd -T -C of OpenSSH 9.2 decides "Match Address".
    CHECK(addr_match_list("192.168.1.20", "10.0.0.0/8,192.168.1.0/24") == addr_list_result::positive);
    CHECK(addr_match_list("192.168.1.20", "192.168.0.0/16,!192.168.1.20") == addr_list_result::negated);
    CHECK(addr_match_list("2001:db8::5", "2001:db8::/32") == addr_list_result::positive);
    CHECK(addr_match_list("127.0.0.1", "127.0.0.*") == addr_list_result::positive);
    CHECK(addr_match_list("127.0.0.1", "10.1.2.3/8") == addr_list_result::invalid); // host bits set
    CHECK(addr_match_list("127.0.0.1", "10.0.0.0/33") == addr_list_result::invalid);
    // Anything that is not an address is a pattern, not an error.
    CHECK(addr_match_list("127.0.0.1", "banana,127.0.0.1") == addr_list_result::positive);
    CHECK(addr_match_list("127.0.0.1", "127.0.0.1/abc") == addr_list_result::none);
    CHECK(addr_match_list("10.1.2.3", "10.0.0.0/8,!10.1.2.0/24") == addr_list_result::negated);
    CHECK(addr_match_list("::ffff:10.1.2.3", "10.0.0.0/8") == addr_list_result::none);
    // Without an address only the syntax is checked.
    CHECK(addr_match_list({}, "10.0.0.0/8,*.example") == addr_list_result::none);
    CHECK(addr_match_list({}, "10.0.0.1/8") == addr_list_result::invalid);
    CHECK(valid_cidr("10.0.0.0/8"));
    CHECK_FALSE(valid_cidr("10.0.0.0/33"));
    CHECK_FALSE(valid_cidr("banana"));
}

TEST_CASE("match: host and address (from=, user@host)")
{
    CHECK(match_host_and_ip("client.example.org", "192.0.2.7", "*.example.org") == 1);
    CHECK(match_host_and_ip("client.example.org", "192.0.2.7", "192.0.2.0/24") == 1);
    CHECK(match_host_and_ip("Client.Example.ORG", "192.0.2.7", "client.example.org") == 1);
    CHECK(match_host_and_ip("client.example.org", "192.0.2.7", "*.example.org,!192.0.2.7") == 0);
    CHECK(match_host_and_ip("client.example.org", "192.0.2.7", "192.0.2.0/24,!client.*") == 0);
    CHECK(match_host_and_ip("client.example.org", "192.0.2.7", "other.example") == 0);
    CHECK(match_host_and_ip("client.example.org", "192.0.2.7", "192.0.2.1/24") == -1);
    CHECK(match_host_and_ip("", "192.0.2.7", "192.0.2.0/24") == 0);

    CHECK(match_user_pattern("alice", "h.example", "192.0.2.7", "al*") == 1);
    CHECK(match_user_pattern("alice", "h.example", "192.0.2.7", "bob") == 0);
    CHECK(match_user_pattern("alice", "h.example", "192.0.2.7", "alice@192.0.2.0/24") == 1);
    CHECK(match_user_pattern("alice", "h.example", "192.0.2.7", "alice@*.example") == 1);
    CHECK(match_user_pattern("alice", "h.example", "192.0.2.7", "alice@10.0.0.0/8") == 0);
    CHECK(match_user_pattern("alice", "h.example", "192.0.2.7", "alice@10.0.0.1/8") == -1);
    // The load-time check: no connection, only the syntax after '@'.
    CHECK(match_user_pattern("", "", "", "alice@10.0.0.1/8") == -1);
    CHECK(match_user_pattern("", "", "", "alice@10.0.0.0/8") == 0);
}
