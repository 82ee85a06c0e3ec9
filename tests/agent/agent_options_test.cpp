#include "ssh/agent/agent_options.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::agent;

namespace {

agent_parse_result parse(std::vector<std::string> args, const char* shell = nullptr)
{
    return parse_agent_args(args, shell);
}

const std::string usage_text = "usage: ssh-agent [-c | -s] [-Dd] [-a bind_address] [-E fingerprint_hash]\n"
                               "                 [-O option] [-P allowed_providers] [-t life]\n"
                               "       ssh-agent [-a bind_address] [-E fingerprint_hash] [-O option]\n"
                               "                 [-P allowed_providers] [-t life] command [arg ...]\n"
                               "       ssh-agent [-c | -s] -k\n";

} // namespace

TEST_CASE("agent options: flags and values")
{
    auto r = parse({"-sD", "-a", "/tmp/s", "-EMD5", "-t", "1h30m", "-O", "no-restrict-websafe", "-P", "/usr/lib/*"});
    REQUIRE(r.options);
    CHECK(r.options->sh);
    CHECK(r.options->foreground);
    CHECK(r.options->bind_address == "/tmp/s");
    CHECK(r.options->hash == fingerprint_hash::md5);
    CHECK(r.options->lifetime == 5400);
    CHECK(r.options->no_restrict_websafe);
    CHECK(*r.options->allowed_providers == "/usr/lib/*");
    auto c = parse({"-t", "60", "sh", "-c", "echo hi"});
    REQUIRE(c.options);
    CHECK(c.options->command == std::vector<std::string>{"sh", "-c", "echo hi"});
    CHECK(parse({"--", "-c"}).options->command == std::vector<std::string>{"-c"});
}

TEST_CASE("agent options: csh from $SHELL only without -s/-c or a command")
{
    CHECK(parse({}, "/bin/tcsh").options->csh);
    CHECK(!parse({}, "/bin/bash").options->csh);
    CHECK(!parse({"-s"}, "/bin/csh").options->csh);
    CHECK(!parse({"true"}, "/bin/csh").options->csh);
    CHECK(!parse({}, "sh").options->csh);
}

TEST_CASE("agent options: errors as OpenSSH prints them")
{
    CHECK(parse({"-Z"}).error.message == "unknown option -- Z\r\n" + usage_text);
    CHECK(parse({"-t"}).error.message == "option requires an argument -- t\r\n" + usage_text);
    CHECK(parse({"-c", "-s"}).error.message == usage_text);
    CHECK(parse({"-s", "-c"}).error.status == 1);
    CHECK(parse({"-d", "-D"}).error.message == usage_text);
    CHECK(parse({"-s", "true"}).error.message == usage_text);
    CHECK(parse({"-k", "true"}).error.message == usage_text);
    auto t = parse({"-t", "xx"});
    CHECK(t.error.message == "Invalid lifetime\n" + usage_text);
    CHECK(t.error.status == 1);
    CHECK(parse({"-t", "-5"}).error.status == 1);
    auto o = parse({"-O", "foo"});
    CHECK(o.error.message == "Unknown -O option\r\n");
    CHECK(o.error.status == 255);
    CHECK(parse({"-O", "allow-remote-pkcs11"}).options->allow_remote_pkcs11);
    CHECK(parse({"-E", "foo"}).error.message == "Invalid hash algorithm \"foo\"\r\n");
    CHECK(parse({"-P", "a", "-P", "b"}).error.message == "-P option already specified\r\n");
}

TEST_CASE("agent options: output lines")
{
    const std::string pid = "42";
    CHECK(environment_lines(false, "/tmp/s", &pid, 42) ==
          "SSH_AUTH_SOCK=/tmp/s; export SSH_AUTH_SOCK;\nSSH_AGENT_PID=42; export SSH_AGENT_PID;\necho Agent pid 42;\n");
    CHECK(environment_lines(true, "/tmp/s", nullptr, 7) == "setenv SSH_AUTH_SOCK /tmp/s;\necho Agent pid 7;\n");
    CHECK(kill_lines(false, 9) == "unset SSH_AUTH_SOCK;\nunset SSH_AGENT_PID;\necho Agent pid 9 killed;\n");
    CHECK(kill_lines(true, 9) == "unsetenv SSH_AUTH_SOCK;\nunsetenv SSH_AGENT_PID;\necho Agent pid 9 killed;\n");
    CHECK(parse_agent_pid(nullptr).error == "SSH_AGENT_PID not set, cannot kill agent\n");
    CHECK(parse_agent_pid("").error == "SSH_AGENT_PID=\"\", which is not a good PID: invalid\n");
    CHECK(parse_agent_pid("1x").error == "SSH_AGENT_PID=\"1x\", which is not a good PID: invalid\n");
    CHECK(parse_agent_pid("1").error == "SSH_AGENT_PID=\"1\", which is not a good PID: too small\n");
    CHECK(parse_agent_pid("99999999999").error == "SSH_AGENT_PID=\"99999999999\", which is not a good PID: too large\n");
    CHECK(parse_agent_pid("1234").pid == 1234);
    CHECK(socket_dir_template(nullptr) == "/tmp/ssh-XXXXXXXXXXXX");
    CHECK(socket_dir_template("/var/t") == "/var/t/ssh-XXXXXXXXXXXX");
}
