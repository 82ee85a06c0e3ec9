#include "sshd/pam_backend.hpp"

#include "tests/sshd/sshd_test_util.hpp"

#include "tests/skip.hpp"

#include <doctest/doctest.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <random>

using namespace longhaul;
using longhaul::test::temp_dir;
using longhaul::test::write_file;

namespace {

// PAM reads services from /etc/pam.d only, so the tests install their own
// (root only) under a random name and remove it afterwards.
class test_service {
public:
    test_service()
    {
        if (::geteuid() != 0)
            return;
        std::random_device rd;
        name_ = "longhaul-test-" + std::to_string(rd()) + std::to_string(rd());
        write_file(dir_.file("check.sh"),
                   "#!/bin/sh\n"
                   "pw=$(tr -d '\\000')\n"
                   "echo \"$PAM_USER $PAM_RHOST $PAM_TTY\" > " + dir_.file("items") + "\n"
                   "[ \"$pw\" = secret ] && exit 0\n"
                   "exit 1\n",
                   0755);
        write_file(dir_.file("account.sh"), "#!/bin/sh\n[ \"$PAM_USER\" = denied ] && exit 1\nexit 0\n", 0755);
        write_file(dir_.file("env"), "LONGHAUL_PAM_TEST=yes\n");
        write_file(dir_.file("conf"), "");
        write_file(path(), "auth     optional pam_echo.so Welcome %u\n"
                           "auth     required pam_exec.so type=auth expose_authtok quiet " + dir_.file("check.sh") + "\n"
                           // pam_setcred needs one module that does not ignore it.
                           "auth     optional pam_permit.so\n"
                           "account  required pam_exec.so quiet " + dir_.file("account.sh") + "\n"
                           "session  required pam_env.so readenv=1 user_readenv=0 envfile=" + dir_.file("env") +
                               " conffile=" + dir_.file("conf") + "\n");
    }
    ~test_service()
    {
        if (!name_.empty())
            ::unlink(path().c_str());
    }
    bool usable() const { return !name_.empty(); }
    const std::string& name() const { return name_; }
    std::string items() const { return longhaul::test::read_file(dir_.file("items")); }

private:
    std::string path() const { return "/etc/pam.d/" + name_; }
    temp_dir dir_;
    std::string name_;
};

// Waits on the event fd as sshd's loop would, then takes the event.
std::optional<pam_event> next_event(pam_authenticator& pam)
{
    pollfd p{pam.event_fd(), POLLIN, 0};
    if (::poll(&p, 1, 20000) != 1)
        return std::nullopt;
    return pam.poll();
}

pam_start_options options(const test_service& s, std::string user, pam_mode mode)
{
    pam_start_options o;
    o.service = s.name();
    o.user = std::move(user);
    o.remote_host = "client.example.org";
    o.mode = mode;
    return o;
}

} // namespace

TEST_CASE("pam: keyboard-interactive conversation without blocking")
{
    test_service svc;
    if (!svc.usable())
        LONGHAUL_SKIP("needs root to install a PAM service in /etc/pam.d");
    pam_authenticator pam;
    std::string err;
    REQUIRE(pam.start(options(svc, "alice", pam_mode::keyboard_interactive), err));
    auto ev = next_event(pam);
    REQUIRE(ev);
    REQUIRE(ev->kind == pam_event::type::prompts);
    CHECK(ev->info == std::vector<std::string>{"Welcome alice"});
    REQUIRE(ev->prompts.size() == 1);
    CHECK_FALSE(ev->prompts[0].echo);
    CHECK(kbdint_prompt_text(*ev, 0) == "Welcome alice\n" + ev->prompts[0].text);
    CHECK_FALSE(pam.poll()); // nothing more until answered
    CHECK(pam.respond({"secret"}));
    ev = next_event(pam);
    REQUIRE(ev);
    CHECK(ev->kind == pam_event::type::done);
    CHECK(ev->success);
    CHECK(svc.items() == "alice client.example.org ssh\n");

    // The session side on the caller's thread.
    CHECK(pam.establish_credentials() == 0);
    CHECK(pam.open_session() == 0);
    const auto env = pam.environment();
    CHECK(std::find(env.begin(), env.end(), "LONGHAUL_PAM_TEST=yes") != env.end());
    CHECK(pam.close_session() == 0);
    CHECK(pam.delete_credentials() == 0);
}

TEST_CASE("pam: wrong answers, account refusal, password mode")
{
    test_service svc;
    if (!svc.usable())
        LONGHAUL_SKIP("needs root to install a PAM service in /etc/pam.d");
    {
        pam_authenticator pam;
        std::string err;
        REQUIRE(pam.start(options(svc, "alice", pam_mode::keyboard_interactive), err));
        auto ev = next_event(pam);
        REQUIRE(ev);
        CHECK(pam.respond({"wrong"}));
        ev = next_event(pam);
        REQUIRE(ev);
        CHECK(ev->kind == pam_event::type::done);
        CHECK_FALSE(ev->success);
        CHECK(ev->error == pam.strerror(ev->pam_status));
    }
    {
        pam_authenticator pam;
        std::string err;
        REQUIRE(pam.start(options(svc, "denied", pam_mode::keyboard_interactive), err));
        REQUIRE(next_event(pam));
        CHECK(pam.respond({"secret"}));
        auto ev = next_event(pam);
        REQUIRE(ev);
        CHECK_FALSE(ev->success);
        CHECK(ev->account_failed);
    }
    for (const auto& [password, expect] : {std::pair{"secret", true}, std::pair{"nope", false}}) {
        pam_authenticator pam;
        std::string err;
        auto o = options(svc, "bob", pam_mode::password);
        o.password = password;
        REQUIRE(pam.start(o, err));
        auto ev = next_event(pam);
        REQUIRE(ev);
        CHECK(ev->kind == pam_event::type::done); // no prompt reaches the caller
        CHECK(ev->success == expect);
        CHECK(ev->info == std::vector<std::string>{"Welcome bob"});
    }
    {
        pam_authenticator pam;
        std::string err;
        REQUIRE(pam.start(options(svc, "carol", pam_mode::account_only), err));
        auto ev = next_event(pam);
        REQUIRE(ev);
        CHECK(ev->success);
    }
}

TEST_CASE("pam: cancelling and abandoning a conversation")
{
    test_service svc;
    if (!svc.usable())
        LONGHAUL_SKIP("needs root to install a PAM service in /etc/pam.d");
    {
        pam_authenticator pam;
        std::string err;
        REQUIRE(pam.start(options(svc, "alice", pam_mode::keyboard_interactive), err));
        REQUIRE(next_event(pam));
        CHECK_FALSE(pam.respond({"a", "b"})); // wrong count: the conversation fails
        auto ev = next_event(pam);
        REQUIRE(ev);
        CHECK_FALSE(ev->success);
        CHECK_FALSE(pam.respond({"late"}));
    }
    {
        pam_authenticator pam;
        std::string err;
        REQUIRE(pam.start(options(svc, "alice", pam_mode::keyboard_interactive), err));
        REQUIRE(next_event(pam));
        pam.cancel();
        auto ev = next_event(pam);
        REQUIRE(ev);
        CHECK_FALSE(ev->success);
        CHECK(pam.finished());
    }
    {
        // Destroyed while PAM waits for answers: must neither hang nor leak the thread's work.
        pam_authenticator pam;
        std::string err;
        REQUIRE(pam.start(options(svc, "alice", pam_mode::keyboard_interactive), err));
        REQUIRE(next_event(pam));
    }
    pam_authenticator unknown;
    std::string err;
    pam_start_options bad;
    bad.service = "longhaul-no-such-service";
    bad.user = "x";
    // Linux-PAM falls back to /etc/pam.d/other for unknown services, which
    // may or may not start; either way nothing must crash.
    if (unknown.start(bad, err)) {
        unknown.cancel();
        (void)next_event(unknown);
    }
}
