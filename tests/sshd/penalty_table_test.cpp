#include "sshd/penalty_table.hpp"

#include "sshd/listener.hpp"

#include "tests/sshd/socket_address_util.hpp"

#include <sys/wait.h>

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using namespace longhaul;
using longhaul::test::v4;
using longhaul::test::v6;

namespace {

penalty_settings parse_penalties(std::vector<std::string> args, std::string* error = nullptr)
{
    unsigned seen = 0;
    auto r = parse_per_source_penalties(args, penalty_settings{}, seen);
    if (error != nullptr)
        *error = r.error;
    else
        REQUIRE(r.error.empty());
    return r.settings;
}

struct penalty_log {
    std::vector<std::pair<log_level, std::string>> lines;
    penalty_table::log_fn sink()
    {
        return [this](log_level l, std::string m) { lines.emplace_back(l, std::move(m)); };
    }
};

} // namespace

TEST_CASE("penalty_table: parsing PerSourcePenalties as OpenSSH 10.5 does")
{
    CHECK_FALSE(penalty_settings{}.enabled);
    CHECK_FALSE(parse_penalties({"no"}).enabled);
    const auto yes = parse_penalties({"yes"});
    CHECK(yes.enabled);
    CHECK(describe(yes) ==
          "crash:90.000000 authfail:5.000000 noauth:1.000000 invaliduser:5.000000 grace-exceeded:10.000000 "
          "refuseconnection:10.000000 max:600.000000 min:15.000000 max-sources4:65536 max-sources6:65536 "
          "overflow:permissive overflow6:permissive");
    CHECK(describe(parse_penalties({"no"})) == "no");

    // Any field turns penalties on; overflow6 follows overflow unless given.
    const auto s = parse_penalties({"authfail:1.5", "max:1h30m", "overflow:deny-all", "max-sources6:5"});
    CHECK(s.enabled);
    CHECK(s.authfail == 1.5);
    CHECK(s.max == 5400);
    CHECK(s.max_sources6 == 5);
    CHECK(s.deny_all4);
    CHECK(s.deny_all6);
    const auto t = parse_penalties({"overflow6:permissive", "overflow:deny-all"});
    CHECK(t.deny_all4);
    CHECK_FALSE(t.deny_all6);

    // First value wins per field, across lines too.
    unsigned seen = 0;
    auto r1 = parse_per_source_penalties({"authfail:3s"}, penalty_settings{}, seen);
    auto r2 = parse_per_source_penalties({"authfail:9", "min:1"}, r1.settings, seen);
    CHECK(r2.settings.authfail == 3);
    CHECK(r2.settings.min == 1);
}

TEST_CASE("penalty_table: bad PerSourcePenalties values are refused with OpenSSH's messages")
{
    std::string e;
    parse_penalties({"bogus:1"}, &e);
    CHECK(e == "unsupported PerSourcePenalties keyword bogus:1");
    parse_penalties({"Authfail:1"}, &e);
    CHECK(e == "unsupported PerSourcePenalties keyword Authfail:1");
    parse_penalties({"overflow:bogus"}, &e);
    CHECK(e == "unsupported PerSourcePenalties keyword overflow:bogus");
    parse_penalties({"authfail:x"}, &e);
    CHECK(e == "invalid PerSourcePenalties time value.");
    parse_penalties({"authfail:-1"}, &e);
    CHECK(e == "invalid PerSourcePenalties time value.");
    parse_penalties({"yes", "authfail:1"}, &e);
    CHECK(e == "keyword PerSourcePenalties \"yes\" argument must appear alone.");
    parse_penalties({"max-sources4:-1"}, &e);
    CHECK(e == "PerSourcePenalties value too small.");
    parse_penalties({"max-sources4:abc"}, &e);
    CHECK(e == "PerSourcePenalties value invalid.");
    parse_penalties({}, &e);
    CHECK(e == "no PerSourcePenalties specified");
}

TEST_CASE("penalty_table: convtime_double takes OpenSSH's time forms")
{
    CHECK(convtime_double("5") == 5);
    CHECK(convtime_double("1.5s") == 1.5);
    CHECK(convtime_double(".5") == 0.5);
    CHECK(convtime_double("1m1.5") == 61.5);
    CHECK(convtime_double("1h30m") == 5400);
    CHECK(convtime_double("1w") == 604800);
    CHECK(convtime_double("0") == 0);
    for (const char* bad : {"", "x", "-1", "2.5m", "1.5s30m", "1.", "1.5.5", "1s2s", "5q"})
        CHECK_MESSAGE(convtime_double(bad) < 0, bad);
}

TEST_CASE("penalty_table: penalties accumulate, activate past min, cap at max, expire")
{
    auto s = parse_penalties({"authfail:5", "noauth:1", "min:12", "max:20"});
    penalty_log log;
    penalty_table t(s, "", 32, 128, log.sink());
    const auto a = v4("192.0.2.1");
    t.penalise(a, penalty_kind::authfail, 100);
    CHECK(t.size4() == 1);
    CHECK_FALSE(t.refusal(a, 100)); // 5 s outstanding: deferred
    REQUIRE(log.lines.size() == 1);
    CHECK(log.lines[0].first == log_level::verbose);
    CHECK(log.lines[0].second ==
          "srclimit_penalise: ipv4: new 192.0.2.1/32 deferred penalty of 5.000 seconds for penalty: failed "
          "authentication");
    t.penalise(a, penalty_kind::authfail, 101); // 9 s
    CHECK_FALSE(t.refusal(a, 101));
    t.penalise(a, penalty_kind::authfail, 102); // 13 s: past min
    auto why = t.refusal(a, 102);
    REQUIRE(why);
    CHECK(*why == "penalty: failed authentication");
    CHECK(log.lines.back().first == log_level::info);
    CHECK(log.lines.back().second ==
          "srclimit_penalise: 192.0.2.1/32: activating ipv4 penalty of 13.000 seconds for penalty: failed "
          "authentication");
    // Accumulation stops at max outstanding.
    for (int i = 0; i < 10; ++i)
        t.penalise(a, penalty_kind::authfail, 103);
    CHECK(t.refusal(a, 122));
    CHECK_FALSE(t.refusal(a, 123.5)); // expired: 103 + 20
    CHECK(t.size4() == 0);
    // The latest kind gives the reason.
    t.penalise(a, penalty_kind::crash, 200);
    CHECK(*t.refusal(a, 200) == "penalty: caused crash");
    t.penalise(a, penalty_kind::noauth, 201);
    CHECK(*t.refusal(a, 201) == "penalty: connections without attempting authentication");
    // Another address is not affected.
    CHECK_FALSE(t.refusal(v4("192.0.2.2"), 201));
}

TEST_CASE("penalty_table: a single penalty past min is active at once; zero and none do nothing")
{
    auto s = parse_penalties({"crash:30", "authfail:0", "min:15"});
    penalty_table t(s, "", 32, 128);
    const auto a = v4("198.51.100.7");
    t.penalise(a, penalty_kind::authfail, 10);
    t.penalise(a, penalty_kind::none, 10);
    CHECK(t.size4() == 0);
    t.penalise(a, penalty_kind::crash, 10);
    CHECK(t.refusal(a, 10));
    CHECK(t.refusal(a, 39.9));
    CHECK_FALSE(t.refusal(a, 40.1));
}

TEST_CASE("penalty_table: PerSourcePenalties no never refuses")
{
    penalty_table t(parse_penalties({"no"}), "", 32, 128);
    const auto a = v4("192.0.2.1");
    for (int i = 0; i < 100; ++i)
        t.penalise(a, penalty_kind::crash, 1);
    CHECK(t.size4() == 0);
    CHECK_FALSE(t.refusal(a, 1));
}

TEST_CASE("penalty_table: PerSourcePenaltyExemptList sources are never penalised")
{
    penalty_log log;
    penalty_table t(parse_penalties({"crash:100"}), "192.0.2.0/24,!192.0.2.9,2001:db8::/32", 32, 128, log.sink());
    for (const char* ip : {"192.0.2.1", "192.0.2.200"}) {
        t.penalise(v4(ip), penalty_kind::crash, 1);
        CHECK_FALSE(t.refusal(v4(ip), 2));
    }
    t.penalise(v6("2001:db8::1"), penalty_kind::crash, 1);
    CHECK_FALSE(t.refusal(v6("2001:db8::1"), 2));
    CHECK(t.size4() == 0);
    CHECK(t.size6() == 0);
    CHECK(log.lines.front().second == "srclimit_penalise: address 192.0.2.1 is exempt");
    // A negated entry is not exempt.
    t.penalise(v4("192.0.2.9"), penalty_kind::crash, 1);
    CHECK(t.refusal(v4("192.0.2.9"), 2));
    // An IPv4-mapped peer is matched as IPv4.
    t.penalise(v6("::ffff:192.0.2.5"), penalty_kind::crash, 1);
    CHECK_FALSE(t.refusal(v6("::ffff:192.0.2.5"), 2));
}

TEST_CASE("penalty_table: penalties apply to PerSourceNetBlockSize blocks")
{
    penalty_table t(parse_penalties({"crash:100"}), "", 24, 64);
    t.penalise(v4("203.0.113.5"), penalty_kind::crash, 1);
    CHECK(t.refusal(v4("203.0.113.77"), 2));
    CHECK_FALSE(t.refusal(v4("203.0.114.5"), 2));
    t.penalise(v6("2001:db8:1:2::5"), penalty_kind::crash, 1);
    CHECK(t.refusal(v6("2001:db8:1:2:ffff::1"), 2));
    CHECK_FALSE(t.refusal(v6("2001:db8:1:3::5"), 2));
    CHECK(t.size4() == 1);
    CHECK(t.size6() == 1);
}

TEST_CASE("penalty_table: permissive overflow drops the soonest to expire")
{
    penalty_table t(parse_penalties({"crash:100", "max-sources4:2"}), "", 32, 128);
    t.penalise(v4("192.0.2.1"), penalty_kind::crash, 1);
    t.penalise(v4("192.0.2.2"), penalty_kind::crash, 2);
    t.penalise(v4("192.0.2.3"), penalty_kind::crash, 3);
    CHECK(t.size4() == 2); // bounded
    CHECK_FALSE(t.refusal(v4("192.0.2.1"), 4));
    CHECK(t.refusal(v4("192.0.2.2"), 4));
    CHECK(t.refusal(v4("192.0.2.3"), 4));
    CHECK_FALSE(t.refusal(v4("192.0.2.4"), 4)); // permissive: others still allowed
}

TEST_CASE("penalty_table: deny-all overflow refuses everyone of that family while full")
{
    penalty_log log;
    penalty_table t(parse_penalties({"crash:100", "max-sources4:2", "overflow:deny-all", "overflow6:permissive",
                           "max-sources6:1"}),
                    "", 32, 128, log.sink());
    t.penalise(v4("192.0.2.1"), penalty_kind::crash, 1);
    t.penalise(v4("192.0.2.2"), penalty_kind::crash, 1);
    t.penalise(v4("192.0.2.3"), penalty_kind::crash, 1); // not recorded
    CHECK(t.size4() == 2);
    CHECK(log.lines.back().second ==
          "srclimit_penalise: ipv4 penalty table full, cannot penalise 192.0.2.3/32 for penalty: caused crash");
    auto why = t.refusal(v4("192.0.2.99"), 2);
    REQUIRE(why);
    CHECK(*why == "too many penalised addresses");
    CHECK_FALSE(t.refusal(v6("2001:db8::1"), 2)); // IPv6 is its own table
    t.penalise(v6("2001:db8::1"), penalty_kind::crash, 1);
    t.penalise(v6("2001:db8::2"), penalty_kind::crash, 2);
    CHECK(t.size6() == 1);
    CHECK_FALSE(t.refusal(v6("2001:db8::3"), 3));
    // Once entries expire the table has room again.
    CHECK_FALSE(t.refusal(v4("192.0.2.99"), 102));
}

TEST_CASE("penalty_table: what the listener saw decides the penalty kind")
{
    const int exited0 = 0;            // W_EXITCODE(0, 0)
    const int exited255 = 255 << 8;   // W_EXITCODE(255, 0)
    const int segv = SIGSEGV;         // killed by SIGSEGV
    const int term = SIGTERM;
    CHECK(penalty_for(connection_outcome::no_auth, exited0) == penalty_kind::noauth);
    CHECK(penalty_for(connection_outcome::auth_failed, exited0) == penalty_kind::authfail);
    CHECK(penalty_for(connection_outcome::invalid_user, exited0) == penalty_kind::invaliduser);
    CHECK(penalty_for(connection_outcome::grace, exited0) == penalty_kind::grace_exceeded);
    CHECK(penalty_for(connection_outcome::crash, exited0) == penalty_kind::crash);
    CHECK(penalty_for(0, exited0) == penalty_kind::none);
    CHECK(penalty_for(0, exited255) == penalty_kind::noauth);
    CHECK(penalty_for(connection_outcome::no_auth, segv) == penalty_kind::crash);
    CHECK(penalty_for(0, term) == penalty_kind::none);
    CHECK(penalty_for(connection_outcome::auth_failed, term) == penalty_kind::authfail);
}
