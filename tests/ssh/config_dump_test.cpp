// `ssh -G` output compared line by line with OpenSSH 9.2's (stored copies
// made by tests/data/ssh/dump/gen.sh, and the installed ssh when present).
#include "ssh/ssh_config.hpp"

#include "common/name_list.hpp"
#include "ssh/algorithm_names.hpp"
#include "ssh/options.hpp"
#include "ssh_test_util.hpp"

#include "tests/openssh_kex_default.hpp"
#include "tests/skip.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace longhaul;

namespace {

const std::string dump_dir = std::string(LONGHAUL_TEST_DATA) + "/ssh/dump/";

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

std::string read_file(const std::string& path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// OpenSSH's line with the algorithm names this build lacks taken out; lines
// for features this build does not print are dropped.
std::vector<std::string> comparable(const std::vector<std::string>& openssh)
{
    std::vector<std::string> out;
    for (const auto& line : openssh) {
        const auto sp = line.find(' ');
        const std::string kw = line.substr(0, sp);
        std::string value = sp == std::string::npos ? "" : line.substr(sp + 1);
        std::string all;
        if (kw == "gssapikexalgorithms")
            continue; // GSSAPI key exchange is not implemented, so not printed
        if (kw == "ciphers")
            all = all_ciphers();
        else if (kw == "macs")
            all = all_macs();
        else if (kw == "kexalgorithms") {
            all = all_kex_algorithms();
            value = test::with_openssh99_kex_default(value);
        }
        else if (kw == "pubkeyacceptedalgorithms" || kw == "hostbasedacceptedalgorithms")
            all = all_pubkey_algorithms(); // certificates too
        else if (kw == "hostkeyalgorithms")
            all = all_host_key_algorithms(); // host certificates too
        else if (kw == "casignaturealgorithms")
            all = all_signature_algorithms(); // security keys too
        if (all.empty()) {
            out.push_back(line);
            continue;
        }
        std::vector<std::string_view> kept;
        for (auto n : split_name_list(value))
            if (name_list_contains(all, n))
                kept.push_back(n);
        out.push_back(kw + " " + join_name_list(kept));
    }
    return out;
}

std::string our_dump(const std::vector<std::string>& args, const config_environment& env)
{
    auto opts = parse_command_line(args, env);
    client_config cfg = opts.config;
    load_client_config(cfg, opts.request(), env, {});
    return dump_config(cfg);
}

config_environment root_environment()
{
    // The stored outputs were made as root with HOME=/root.
    auto env = config_environment::for_home("/root", "root", "/nonexistent/ssh_config");
    env.local_hostname = "vm";
    env.uid = "0";
    env.homes = [](const std::string& user) -> std::optional<std::string> {
        if (user == "root")
            return std::string("/root");
        return std::nullopt;
    };
    return env;
}

void compare(std::vector<std::string> ours, const std::vector<std::string>& openssh)
{
    // Longhaul's own keywords come last, in this order; OpenSSH has none of them.
    const std::vector<std::string> longhaul = {"channelwindowmax ", "connectionwindowmax ", "metrics ",
                                               "metricspath ", "metricsinterval ", "cryptothreads "};
    REQUIRE(ours.size() >= longhaul.size());
    const std::size_t first = ours.size() - longhaul.size();
    for (std::size_t i = 0; i < longhaul.size(); ++i)
        CHECK(ours[first + i].rfind(longhaul[i], 0) == 0);
    ours.resize(first);
    const auto expected = comparable(openssh);
    const std::size_t n = std::max(ours.size(), expected.size());
    for (std::size_t i = 0; i < n; ++i) {
        const std::string a = i < ours.size() ? ours[i] : "<missing>";
        const std::string b = i < expected.size() ? expected[i] : "<missing>";
        INFO("line " << i + 1);
        CHECK(a == b);
        if (a != b)
            break; // one mismatch shifts every later line
    }
}

struct stored_case {
    const char* output;
    std::vector<std::string> args;
};

std::vector<stored_case> stored_cases()
{
    return {
        {"default.G", {"-F", "/dev/null", "somehost"}},
        {"full.G", {"-F", dump_dir + "full.conf", "-o", "ProxyJump=none", "h"}},
        {"match_web1.G", {"-F", dump_dir + "match.conf", "web1.example.com"}},
        {"match_bad.G", {"-F", dump_dir + "match.conf", "bad.example.com"}},
        {"options.G",
         {"-F", "/dev/null", "-p", "2222", "-l", "carol", "-4", "-C", "-tt", "-e", "^]", "-c", "aes128-ctr,aes256-ctr",
          "-m", "hmac-sha2-256", "-o", "IdentityFile /nonexistent/id", "-o", "ServerAliveCountMax=7", "-L",
          "8080:localhost:80", "-D", "1080", "-R", "9000:127.0.0.1:22", "-J", "jump@gw:2222", "-N", "-o",
          "SetEnv A=1 B=2", "-o", "EscapeChar none", "options.host"}},
    };
}

} // namespace

TEST_CASE("CryptoThreads: auto by default, a number or auto taken, anything else refused")
{
    const auto env = root_environment();
    auto last_line = [&](std::vector<std::string> args) {
        args.push_back("h");
        return lines_of(our_dump(args, env)).back();
    };
    CHECK(last_line({}) == "cryptothreads auto");
    CHECK(last_line({"-o", "CryptoThreads=0"}) == "cryptothreads 0");
    CHECK(last_line({"-o", "CryptoThreads 4"}) == "cryptothreads 4");
    CHECK(last_line({"-o", "cryptothreads=auto"}) == "cryptothreads auto");
    for (const char* bad : {"CryptoThreads=-1", "CryptoThreads=65", "CryptoThreads=two", "CryptoThreads="})
        CHECK_THROWS(our_dump({"-o", bad, "h"}, env));
}

TEST_CASE("dump_config matches stored ssh -G output line by line")
{
    const auto env = root_environment();
    for (const auto& c : stored_cases()) {
        INFO("stored output " << c.output);
        compare(lines_of(our_dump(c.args, env)), lines_of(read_file(dump_dir + c.output)));
    }
}

namespace {

bool have_openssh_9()
{
    std::FILE* probe = popen("ssh -V 2>&1", "r");
    char buf[256] = {};
    const bool have = probe != nullptr && std::fgets(buf, sizeof buf, probe) != nullptr &&
                      std::string(buf).rfind("OpenSSH_9", 0) == 0;
    if (probe != nullptr)
        pclose(probe);
    return have;
}

std::string run_openssh_dump(const std::vector<std::string>& args)
{
    std::string cmd = "ssh -G";
    for (const auto& a : args)
        cmd += " '" + a + "'";
    cmd += " 2>/dev/null </dev/null";
    std::FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p) != nullptr)
        out += buf;
    pclose(p);
    return out;
}

} // namespace

TEST_CASE("dump_config matches the installed ssh -G on generated configs (regress)")
{
    if (!have_openssh_9())
        LONGHAUL_SKIP("OpenSSH 9.x ssh not installed (openssh-client)");
    test::scratch_dir dir;
    const std::string d = dir.path();
    dir.write("inc/10-a.conf", "Host web*\n  User webuser\n  Port 2201\nMatch all\n  Compression yes\n");
    dir.write("inc/20-b.conf", "Host *\n  SendEnv B_*\n  IdentityFile " + d + "/id_%h_%r\n");
    dir.write("main.conf", "Include " + d + "/inc/*.conf\n"
                           "Host web1 !web2\n  HostName %h.internal.example\n  ControlPath " + d + "/cm-%C-%L-%l-%i\n"
                           "Match exec \"test %h = web1.internal.example\" user webuser\n  LogLevel ERROR\n"
                           "Match originalhost web2\n  UserKnownHostsFile " + d + "/kh-%n %d/kh2\n"
                           "Host *\n  StrictHostKeyChecking accept-new\n  ServerAliveInterval 1h30m\n"
                           "  RekeyLimit 512M\n  EscapeChar ^B\n  IPQoS 0x20\n  ProxyCommand nc %h %p # kept\n");
    // A system-style file as Debian 12 ships /etc/ssh/ssh_config (with its
    // Include of ssh_config.d), written here: the machine's own ~/.ssh/config
    // and /etc/ssh files are never read, so what they hold cannot matter.
    dir.write("etc/ssh_config.d/20-local.conf", "Host other.host\n  User fromdropin\n  Compression yes\n");
    dir.write("etc/ssh_config", "Include " + d + "/etc/ssh_config.d/*.conf\n"
                                "Host *\n    SendEnv LANG LC_*\n    HashKnownHosts yes\n    GSSAPIAuthentication yes\n");
    dir.write("final.conf", "Match final host real.example\n  User finaluser\n"
                            "Host short\n  HostName Real.Example\n  CanonicalizeHostname no\n"
                            "Host real.example\n  Port 3333\nHost *\n  SendEnv X\n  SetEnv A=1\n  SetEnv B=2\n");
    const std::vector<std::vector<std::string>> cases = {
        {"-F", d + "/main.conf", "web1"},
        {"-F", d + "/main.conf", "web2"},
        {"-F", d + "/main.conf", "-p", "2022", "-l", "other", "web1", "uptime"},
        {"-F", d + "/final.conf", "short"},
        {"-F", d + "/final.conf", "-J", "u@[::1]:2200,x:2", "-o", "ProxyCommand=y", "short"},
        {"-F", d + "/final.conf", "-o", "ProxyJump=10.0.0.1", "-o", "ControlPath=~/%C", "short"},
        {"-F", d + "/etc/ssh_config", "somehost"},
        {"-F", d + "/etc/ssh_config", "-l", "someone", "-p", "2200", "Other.Host"},
    };
    const auto env = config_environment::from_system();
    for (const auto& args : cases) {
        std::string shown;
        for (const auto& a : args)
            shown += a + " ";
        INFO("ssh -G " << shown);
        compare(lines_of(our_dump(args, env)), lines_of(run_openssh_dump(args)));
    }
}

TEST_CASE("dump_config matches the installed ssh -G (regress)")
{
    if (!have_openssh_9())
        LONGHAUL_SKIP("OpenSSH 9.x ssh not installed (openssh-client)");
    const auto env = config_environment::from_system();
    for (const auto& c : stored_cases()) {
        INFO("case " << c.output);
        compare(lines_of(our_dump(c.args, env)), lines_of(run_openssh_dump(c.args)));
    }
}
