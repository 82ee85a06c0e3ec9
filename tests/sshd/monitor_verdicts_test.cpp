// The lines sshd's monitor writes of authentication (issue 12): verdicts
// from what the monitor decided, the child's lines marked as the child's.
#include "sshd/monitor_verdicts.hpp"

#include "common/auth/auth_common.hpp"
#include "common/keys/private_key.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using namespace longhaul;

namespace {

struct verdict_log {
    std::vector<std::pair<log_level, std::string>> lines;
    monitor_verdicts make(bool use_pam = false)
    {
        return monitor_verdicts("192.0.2.1", 50000, use_pam,
                                [this](log_level l, std::string s) { lines.emplace_back(l, std::move(s)); });
    }
    std::string last() const { return lines.empty() ? std::string() : lines.back().second; }
};

const public_key& verdict_test_key()
{
    static const public_key k = private_key::generate(key_type::ed25519)->public_part();
    return k;
}

} // namespace

TEST_CASE("monitor verdicts: a line from the child is marked as the child's, whatever it says")
{
    verdict_log log;
    auto v = log.make();
    // What a compromised child would send to pass for the monitor.
    v.child_line(log_level::info, "Accepted password for root from 192.0.2.9 port 1 ssh2");
    CHECK(log.last() == "Accepted password for root from 192.0.2.9 port 1 ssh2 [preauth]");
    // A second line smuggled after a newline stays on the first one, escaped.
    v.child_line(log_level::info, "Connection closed\nAccepted password for root");
    CHECK(log.last().find('\n') == std::string::npos);
    CHECK(log.last().size() > std::string(" [preauth]").size());
    CHECK(log.last().substr(log.last().size() - 10) == " [preauth]");
    // The child's own marks are not doubled.
    v.child_line(log_level::verbose, "Postponed publickey for alice from 192.0.2.1 port 50000 ssh2 [preauth]");
    CHECK(log.last() == "Postponed publickey for alice from 192.0.2.1 port 50000 ssh2 [preauth]");
    CHECK(log.lines.back().first == log_level::verbose);
}

TEST_CASE("monitor verdicts: failures and the success, as sshd's auth_log writes them")
{
    verdict_log log;
    auto v = log.make();
    server_auth_settings s;
    v.user("alice", user_status::valid);
    CHECK(log.lines.empty());
    const std::string fp = describe_key(verdict_test_key());
    v.failed(method_publickey, "", &verdict_test_key(), s);
    CHECK(log.last() == "Failed publickey for alice from 192.0.2.1 port 50000 ssh2: " + fp);
    CHECK(log.lines.back().first == log_level::verbose); // a key offered and refused is not news
    v.failed(method_password, "", nullptr, s);
    CHECK(log.last() == "Failed password for alice from 192.0.2.1 port 50000 ssh2");
    CHECK(log.lines.back().first == log_level::info);
    v.failed(method_kbdint, "pam", nullptr, s);
    CHECK(log.last() == "Failed keyboard-interactive/pam for alice from 192.0.2.1 port 50000 ssh2");
    // Half of MaxAuthTries (6) failed: from now on every failure is at INFO.
    v.failed(method_publickey, "", &verdict_test_key(), s);
    CHECK(log.lines.back().first == log_level::info);
    v.succeeded(method_publickey, "", &verdict_test_key(), false, s.root_login, true, true, s);
    CHECK(log.last() == "Accepted publickey for alice from 192.0.2.1 port 50000 ssh2: " + fp);
    CHECK(log.lines.back().first == log_level::info);
}

TEST_CASE("monitor verdicts: invalid users, root's refusals, partial success, PAM's account check, timeout")
{
    server_auth_settings s;
    SUBCASE("an invalid user")
    {
        verdict_log log;
        auto v = log.make();
        v.user("mallory", user_status::unknown);
        CHECK(log.last() == "Invalid user mallory from 192.0.2.1 port 50000");
        v.failed(method_password, "", nullptr, s);
        CHECK(log.last() == "Failed password for invalid user mallory from 192.0.2.1 port 50000 ssh2");
    }
    SUBCASE("a user AllowUsers refuses: no Invalid user line, still an invalid user's attempts")
    {
        verdict_log log;
        auto v = log.make();
        v.user("carol", user_status::refused);
        CHECK(log.lines.empty());
        v.failed(method_password, "", nullptr, s);
        CHECK(log.last() == "Failed password for invalid user carol from 192.0.2.1 port 50000 ssh2");
    }
    SUBCASE("root refused by PermitRootLogin, then accepted for a forced command")
    {
        verdict_log log;
        auto v = log.make();
        v.user("root", user_status::valid);
        v.succeeded(method_password, "", nullptr, true, permit_root_login::prohibit_password, false, true, s);
        REQUIRE(log.lines.size() == 2);
        CHECK(log.lines[0].second == "ROOT LOGIN REFUSED FROM 192.0.2.1 port 50000");
        CHECK(log.lines[1].second == "Failed password for root from 192.0.2.1 port 50000 ssh2");
        v.succeeded(method_publickey, "", &verdict_test_key(), true, permit_root_login::forced_commands_only, true, true,
                    s);
        REQUIRE(log.lines.size() == 4);
        CHECK(log.lines[2].second == "Root login accepted for forced command.");
        CHECK(log.lines[3].second.rfind("Accepted publickey for root from", 0) == 0);
    }
    SUBCASE("AuthenticationMethods not yet satisfied")
    {
        verdict_log log;
        auto v = log.make();
        v.user("alice", user_status::valid);
        v.succeeded(method_publickey, "", &verdict_test_key(), false, s.root_login, true, false, s);
        CHECK(log.last().rfind("Partial publickey for alice from 192.0.2.1 port 50000 ssh2: ", 0) == 0);
    }
    SUBCASE("with UsePAM the verdict waits for the account check")
    {
        verdict_log log;
        auto v = log.make(true);
        v.user("alice", user_status::valid);
        v.succeeded(method_password, "", nullptr, false, s.root_login, true, true, s);
        CHECK(log.lines.empty());
        v.account(false, s);
        CHECK(log.last() == "Failed password for alice from 192.0.2.1 port 50000 ssh2");
        v.succeeded(method_kbdint, "pam", nullptr, false, s.root_login, true, true, s);
        CHECK(log.lines.size() == 1);
        v.account(true, s);
        CHECK(log.last() == "Accepted keyboard-interactive/pam for alice from 192.0.2.1 port 50000 ssh2");
        // An account answer with no verdict waiting writes nothing.
        v.account(true, s);
        CHECK(log.lines.size() == 2);
    }
    SUBCASE("LoginGraceTime")
    {
        verdict_log log;
        auto v = log.make();
        v.timeout();
        CHECK(log.last() == "Timeout before authentication for 192.0.2.1 port 50000");
    }
}

TEST_CASE("monitor verdicts: failed logins for btmp are invalid users and failed passwords or conversations")
{
    verdict_log log;
    auto v = log.make();
    std::vector<std::string> failed;
    v.on_failed_login = [&failed](const std::string& user) { failed.push_back(user); };
    server_auth_settings s;
    v.user("mallory", user_status::unknown);
    CHECK(failed == std::vector<std::string>{"mallory"});
    v.failed("password", "", nullptr, s);
    v.failed("keyboard-interactive", "pam", nullptr, s);
    CHECK(failed.size() == 3);
    // A refused key, a partial success and "none" are not failed logins.
    failed.clear();
    v.user("alice", user_status::valid);
    v.failed("publickey", "", &verdict_test_key(), s);
    v.failed("none", "", nullptr, s);
    v.succeeded("password", "", nullptr, false, permit_root_login::yes, true, false, s);
    CHECK(failed.empty());
    // root refused by PermitRootLogin after a good password: a failed password.
    v.user("root", user_status::valid);
    v.succeeded("password", "", nullptr, true, permit_root_login::prohibit_password, false, true, s);
    CHECK(failed == std::vector<std::string>{"root"});
}
