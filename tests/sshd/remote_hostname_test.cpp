#include "sshd/remote_hostname.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace longhaul;

namespace {

// A resolver from two tables: PTR names, and each name's addresses (a name
// missing from `a` fails to resolve).
host_resolver fake(std::map<std::string, std::string> ptr, std::map<std::string, std::vector<std::string>> a)
{
    host_resolver r;
    r.reverse = [ptr](const std::string& address) -> std::optional<std::string> {
        auto it = ptr.find(address);
        if (it == ptr.end())
            return std::nullopt;
        return it->second;
    };
    r.forward = [a](const std::string& name, bool) -> std::optional<std::vector<std::string>> {
        auto it = a.find(name);
        if (it == a.end())
            return std::nullopt;
        return it->second;
    };
    return r;
}

std::string logged(const remote_host_name& r) { return r.log.empty() ? "" : r.log.front().text; }

} // namespace

// issue 12 (8): with UseDNS the name was taken from the PTR record alone,
// which whoever controls the client's address block writes: from="*.example.com",
// user@host patterns and Match Host could be satisfied at will.
TEST_CASE("UseDNS: a name whose forward lookup includes the address is used (lower-cased)")
{
    auto r = lookup_remote_hostname("192.0.2.7", fake({{"192.0.2.7", "Host.Example.COM"}},
                                                      {{"host.example.com", {"192.0.2.9", "192.0.2.7"}}}));
    CHECK(r.host == "host.example.com");
    CHECK(r.log.empty());
}

TEST_CASE("UseDNS: a PTR name that does not map back to the address is not used")
{
    auto r = lookup_remote_hostname("192.0.2.7", fake({{"192.0.2.7", "trusted.example.com"}},
                                                      {{"trusted.example.com", {"198.51.100.1"}}}));
    CHECK(r.host == "192.0.2.7");
    CHECK(logged(r) == "Address 192.0.2.7 maps to trusted.example.com, but this does not map back to the address.");
}

TEST_CASE("UseDNS: a PTR name that does not resolve at all is not used")
{
    auto r = lookup_remote_hostname("192.0.2.7", fake({{"192.0.2.7", "nowhere.example.com"}}, {}));
    CHECK(r.host == "192.0.2.7");
    CHECK(logged(r) == "reverse mapping checking getaddrinfo for nowhere.example.com [192.0.2.7] failed.");
}

TEST_CASE("UseDNS: a PTR record holding a numeric address is ignored")
{
    auto r = lookup_remote_hostname("192.0.2.7", fake({{"192.0.2.7", "10.0.0.1"}}, {{"10.0.0.1", {"192.0.2.7"}}}));
    CHECK(r.host == "192.0.2.7");
    CHECK(logged(r) == "Nasty PTR record \"10.0.0.1\" is set up for 192.0.2.7, ignoring");
}

TEST_CASE("UseDNS: no PTR record: the address")
{
    auto r = lookup_remote_hostname("2001:db8::5", fake({}, {}));
    CHECK(r.host == "2001:db8::5");
    CHECK(r.log.empty());
}
