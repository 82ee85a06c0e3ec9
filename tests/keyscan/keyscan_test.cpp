#include "ssh/keyscan/keyscan_options.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/private_key.hpp"
#include "ssh/keyscan/keyscan_format.hpp"

#include <doctest/doctest.h>

#include <sys/socket.h>

using namespace longhaul;

namespace {

keyscan_parse_result parse(std::vector<std::string> args) { return parse_keyscan_args(args); }

// A source of fixed bytes, so that -H's salts are known.
class fixed_random final : public random_source {
public:
    void fill(mutable_byte_span out) override
    {
        for (auto& b : out)
            b = 0x42;
    }
};

} // namespace

TEST_CASE("keyscan: options")
{
    auto r = parse({"-46cDHv", "-p", "2222", "-T2", "-t", "rsa,ED25519,ssh-ed25519", "-f", "-", "-f", "x", "h1",
                    "-p", "h2"});
    REQUIRE(r.options);
    const auto& o = *r.options;
    CHECK(o.family == AF_INET6);
    CHECK(o.certificates);
    CHECK(o.sshfp);
    CHECK(o.hash);
    CHECK(o.verbose);
    CHECK(o.port == 2222);
    CHECK(o.timeout_s == 2);
    CHECK(o.types == (kt_rsa | kt_ed25519));
    CHECK(o.files == std::vector<std::string>{"", "x"});
    // Options stop at the first operand (BSD getopt).
    CHECK(o.hosts == std::vector<std::string>{"h1", "-p", "h2"});

    auto d = parse({"host"});
    REQUIRE(d.options);
    CHECK(d.options->port == 22);
    CHECK(d.options->timeout_s == 5);
    CHECK(d.options->types == keyscan_default_types);
    CHECK(d.options->family == 0);

    auto t = parse({"-T", "1m", "h"});
    REQUIRE(t.options);
    CHECK(t.options->timeout_s == 60);

    auto sk = parse({"-t", "ecdsa-sk,dsa,ssh-rsa,rsa-sha2-512,ecdsa-sha2-nistp384,,", "h"});
    REQUIRE(sk.options);
    CHECK(sk.options->types == (kt_ecdsa_sk | kt_dsa | kt_rsa | kt_ecdsa));

    auto o1 = parse({"-O", "hashalg=sha1", "-D", "h"});
    REQUIRE(o1.options);
    CHECK(o1.options->sshfp_digest == 1);
}

TEST_CASE("keyscan: command line errors as OpenSSH 9.2 prints them")
{
    const std::string usage = keyscan_usage_text();
    auto none = parse({});
    CHECK_FALSE(none.options);
    CHECK(none.error.message == usage);
    CHECK(none.error.status == 1);

    auto unknown = parse({"-x", "h"});
    CHECK(unknown.error.message == "unknown option -- x\r\n" + usage);
    CHECK(unknown.error.status == 1);

    auto missing = parse({"-p"});
    CHECK(missing.error.message == "option requires an argument -- p\r\n" + usage);

    auto port = parse({"-p", "0", "h"});
    CHECK(port.error.message == "Bad port '0'\n");
    CHECK(port.error.status == 1);
    CHECK(parse({"-p", "x", "h"}).error.message == "Bad port 'x'\n");

    auto timeout = parse({"-T", "0", "h"});
    CHECK(timeout.error.message == "Bad timeout '0'\n" + usage);
    CHECK(parse({"-T", "abc", "h"}).error.message == "Bad timeout 'abc'\n" + usage);

    auto type = parse({"-t", "rsa,foo", "h"});
    CHECK(type.error.message == "Unknown key type \"foo\"\r\n");
    CHECK(type.error.status == 255);
    // Certificate names are refused: -c asks for certificates.
    CHECK(parse({"-t", "ed25519-cert", "h"}).error.message == "Unknown key type \"ed25519-cert\"\r\n");
    CHECK(parse({"-t", "ssh-ed25519-cert-v01@openssh.com", "h"}).error.status == 255);

    CHECK(parse({"-O", "foo", "h"}).error.message == "Unsupported -O option\r\n");
    CHECK(parse({"-O", "hashalg=md5", "h"}).error.message == "Unsupported hash algorithm\r\n");
}

TEST_CASE("keyscan: host key algorithms per type")
{
    CHECK(keyscan_host_key_algorithms(kt_rsa, false) == "rsa-sha2-512,rsa-sha2-256,ssh-rsa");
    CHECK(keyscan_host_key_algorithms(kt_ed25519, true) == "ssh-ed25519-cert-v01@openssh.com");
    CHECK(keyscan_host_key_algorithms(kt_ecdsa, false) ==
          "ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521");
}

TEST_CASE("keyscan: -f lines and entries")
{
    CHECK(clean_keyscan_line("host # comment\n") == "host");
    CHECK(clean_keyscan_line("10.0.0.1,sad.example.org\t \n") == "10.0.0.1,sad.example.org");
    CHECK_FALSE(clean_keyscan_line("# only a comment\n"));
    CHECK_FALSE(clean_keyscan_line(" \t\n"));

    auto one = split_keyscan_entry("host.example,10.0.0.1");
    REQUIRE(one);
    CHECK(one->connect_names == "host.example,10.0.0.1");
    CHECK(one->output_names == "host.example,10.0.0.1");

    auto pair = split_keyscan_entry("10.0.0.1 a.example,b.example");
    REQUIRE(pair);
    CHECK(pair->connect_names == "10.0.0.1");
    CHECK(pair->output_names == "a.example,b.example");
    CHECK_FALSE(split_keyscan_entry("  "));
}

TEST_CASE("keyscan: CIDR ranges")
{
    auto r = cidr_range::parse("192.168.16.0/30");
    REQUIRE(r);
    std::vector<std::string> got;
    while (auto a = r->next())
        got.push_back(*a);
    CHECK(got == std::vector<std::string>{"192.168.16.0", "192.168.16.1", "192.168.16.2", "192.168.16.3"});

    auto single = cidr_range::parse("127.0.0.1");
    REQUIRE(single);
    CHECK(single->next() == "127.0.0.1");
    CHECK_FALSE(single->next());

    auto v6 = cidr_range::parse("::fe/127");
    REQUIRE(v6);
    CHECK(v6->next() == "::fe");
    CHECK(v6->next() == "::ff");
    CHECK_FALSE(v6->next());

    // Host bits set, a bad length, a name: not a range (a host name then).
    CHECK_FALSE(cidr_range::parse("10.0.0.1/24"));
    CHECK_FALSE(cidr_range::parse("10.0.0.0/33"));
    CHECK_FALSE(cidr_range::parse("example.org"));
    CHECK_FALSE(cidr_range::parse("10.0.0.1 name"));
}

TEST_CASE("keyscan: output lines")
{
    fixed_random rng;
    auto priv = private_key::generate(key_type::ed25519);
    REQUIRE(priv);
    const public_key& key = priv->public_part();
    const std::string kline = std::string(key.type_name()) + " " + base64_encode(key.blob());

    keyscan_format f;
    // Port 22: one line for all the names, lowercased.
    CHECK(format_keyscan_key("Host.Example,10.0.0.1", key, nullptr, f, rng) == "host.example,10.0.0.1 " + kline + "\n");
    // Another port: a line per name, as known_hosts writes it.
    f.port = 2222;
    CHECK(format_keyscan_key("a,B", key, nullptr, f, rng) == "[a]:2222 " + kline + "\n[b]:2222 " + kline + "\n");

    // -H: each name hashed (on its own, port included) with a fresh salt.
    f.hash = true;
    const std::string hashed = format_keyscan_key("a,b", key, nullptr, f, rng);
    const auto nl = hashed.find('\n');
    REQUIRE(nl != std::string::npos);
    const std::string first = hashed.substr(0, nl);
    REQUIRE(first.rfind("|1|", 0) == 0);
    const std::string entry = first.substr(0, first.find(' '));
    CHECK(hashed_host_matches(entry, "[a]:2222"));
    CHECK_FALSE(hashed_host_matches(entry, "[b]:2222"));
    CHECK(first.substr(first.find(' ') + 1) == kline);

    // -D: ssh-keygen -r's records, for each name off port 22.
    keyscan_format d;
    d.sshfp = true;
    const std::string both = format_keyscan_key("h1", key, nullptr, d, rng);
    CHECK(both.rfind("h1 IN SSHFP 4 1 ", 0) == 0);
    CHECK(both.find("\nh1 IN SSHFP 4 2 ") != std::string::npos);
    d.sshfp_digest = 2;
    const std::string sha256 = format_keyscan_key("h1", key, nullptr, d, rng);
    CHECK(sha256.rfind("h1 IN SSHFP 4 2 ", 0) == 0);
    CHECK(sha256.find("SSHFP 4 1") == std::string::npos);

    CHECK(format_keyscan_banner("127.0.0.1", 22, "SSH-2.0-OpenSSH_9.2p1", false) ==
          "# 127.0.0.1:22 SSH-2.0-OpenSSH_9.2p1\n");
    CHECK(format_keyscan_banner("h", 2222, "SSH-2.0-x", true) == "; h:2222 SSH-2.0-x\n");
}
