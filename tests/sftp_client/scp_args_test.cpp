// scp's operands and options as OpenSSH's scp.c reads them.
#include "ssh/scp/scp_args.hpp"
#include "ssh/sftp_client/program_args.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

using namespace longhaul::scp;

namespace {

scp_options parse(std::vector<std::string> a)
{
    a.insert(a.begin(), "scp");
    std::vector<char*> argv;
    for (auto& s : a)
        argv.push_back(s.data());
    return parse_command_line(int(argv.size()), argv.data());
}

} // namespace

TEST_CASE("scp args: host:path, user@host:path, [v6]:path, local paths")
{
    CHECK(find_colon("host:path") == 4);
    CHECK(find_colon("./a:b") == std::string::npos);
    CHECK(find_colon("/abs:x") == std::string::npos);
    CHECK(find_colon(":x") == std::string::npos);
    CHECK(find_colon("[::1]:p") == 5);
    auto op = parse_operand("alice@example.org:dir/f");
    REQUIRE(op);
    CHECK(op->user == "alice");
    CHECK(op->host == "example.org");
    CHECK(op->path == "dir/f");
    op = parse_operand("u@[fe80::1]:/tmp/x");
    REQUIRE(op);
    CHECK(op->host == "fe80::1");
    CHECK(op->path == "/tmp/x");
    op = parse_operand("plain/file");
    REQUIRE(op);
    CHECK(op->host.empty());
    CHECK(op->path == "plain/file");
}

TEST_CASE("scp args: scp:// URIs with a port, escapes, and invalid ones")
{
    auto op = parse_operand("scp://bob@h.example:2222/some%20dir/f");
    REQUIRE(op);
    CHECK(op->user == "bob");
    CHECK(op->host == "h.example");
    CHECK(op->port == 2222);
    CHECK(op->path == "some dir/f");
    op = parse_operand("scp://h");
    REQUIRE(op);
    CHECK(op->path.empty());
    CHECK_FALSE(parse_operand("scp://h:99999/x"));
    CHECK_FALSE(parse_operand("scp://:22/x"));
}

TEST_CASE("scp args: options, pass-through to ssh, and refusals")
{
    auto o = parse({"-rp", "-P", "2200", "-l", "800", "-o", "Compression=yes", "-C", "-q", "-O", "a", "h:b"});
    CHECK(o.recursive);
    CHECK(o.preserve);
    CHECK(o.port == 2200);
    CHECK(o.limit_kbps == 800);
    CHECK(o.quiet);
    CHECK(o.mode == transfer_mode::legacy);
    CHECK(o.operands == std::vector<std::string>{"a", "h:b"});
    CHECK(std::find(o.ssh.args.begin(), o.ssh.args.end(), "Compression=yes") != o.ssh.args.end());
    CHECK(std::find(o.ssh.args.begin(), o.ssh.args.end(), "-C") != o.ssh.args.end());
    o = parse({"-S", "/opt/ssh", "-X", "buffer=65536", "-X", "nrequests=16", "a", "h:"});
    CHECK(o.ssh.program == "/opt/ssh");
    CHECK(o.buffer_size == 65536);
    CHECK(o.num_requests == 16);
    CHECK_THROWS_AS(parse({"-Z", "a", "b"}), usage_error);
    CHECK_THROWS_AS(parse({"-l", "abc", "a", "b"}), usage_error);
    o = parse({"-J", "jump,other:2222", "a", "h:b"});
    CHECK(std::find(o.ssh.args.begin(), o.ssh.args.end(), "-oProxyJump=jump,other:2222") != o.ssh.args.end());
    // -A: ssh forwards the agent (after the transfer's -oForwardAgent=no,
    // which -A overrides), to the origin host of a -R copy too.
    o = parse({"-A", "a", "h:b"});
    CHECK(std::find(o.ssh.args.begin(), o.ssh.args.end(), "-A") != o.ssh.args.end());
    CHECK(std::find(o.remote_remote_args.begin(), o.remote_remote_args.end(), "-A") != o.remote_remote_args.end());
    o = parse({"a", "h:b"});
    CHECK(std::find(o.ssh.args.begin(), o.ssh.args.end(), "-A") == o.ssh.args.end());
    CHECK_THROWS_AS(parse({"-P"}), usage_error);
    CHECK(ok_user_name("alice.b-c_d"));
    CHECK_FALSE(ok_user_name("-oProxyCommand=x"));
    CHECK_FALSE(ok_user_name("a b"));
}

TEST_CASE("sftp -B and -R: strtol's numbers, not 0; negative and large ones taken as the cap")
{
    using longhaul::sftp::parse_sftp_size_option;
    CHECK(parse_sftp_size_option("65536", 262144) == 65536u);
    CHECK(parse_sftp_size_option(" +7", 262144) == 7u);
    CHECK(parse_sftp_size_option("300000", 262144) == 262144u);
    CHECK(parse_sftp_size_option("-5", 4096) == 4096u);
    CHECK(parse_sftp_size_option("99999999999999999999999", 4096) == 4096u);
    for (const char* refused : {"0", "", "-0", "1x", "64K", "0x10", "5 "}) {
        CAPTURE(refused);
        CHECK_FALSE(parse_sftp_size_option(refused, 4096));
    }
}

TEST_CASE("scp and sftp -X: OpenSSH's fatal messages, strtonum's reasons")
{
    std::uint32_t buffer = 0, requests = 0;
    CHECK(longhaul::sftp::apply_sftp_x_option("buffer=65536", buffer, requests).empty());
    CHECK(buffer == 65536);
    CHECK(longhaul::sftp::apply_sftp_x_option("nrequests=64", buffer, requests).empty());
    CHECK(requests == 64);
    CHECK(longhaul::sftp::apply_sftp_x_option("buffer=0", buffer, requests) == "Invalid buffer size \"0\": Invalid argument");
    CHECK(longhaul::sftp::apply_sftp_x_option("buffer=x", buffer, requests) == "Invalid buffer size \"x\": Invalid argument");
    CHECK(longhaul::sftp::apply_sftp_x_option("buffer=262145", buffer, requests) ==
          "Invalid buffer size \"262145\": Invalid argument");
    // Sizes as scan_scaled reads them, as OpenSSH's.
    // (A pair, not a structured binding: clang 14's CAPTURE cannot take one.)
    for (const auto& size : std::vector<std::pair<std::string, std::uint32_t>>{
             {"64K", 65536}, {"64k", 65536}, {"1.5K", 1536}, {"256K", 262144}, {"512B", 512}}) {
        CAPTURE(size.first);
        CHECK(longhaul::sftp::apply_sftp_x_option("buffer=" + size.first, buffer, requests).empty());
        CHECK(buffer == size.second);
    }
    CHECK(longhaul::sftp::apply_sftp_x_option("buffer=1M", buffer, requests) == "Invalid buffer size \"1M\": Invalid argument");
    CHECK(longhaul::sftp::apply_sftp_x_option("buffer=1KB", buffer, requests) == "Invalid buffer size \"1KB\": Invalid argument");
    CHECK(longhaul::sftp::apply_sftp_x_option("buffer=K", buffer, requests) == "Invalid buffer size \"K\": Invalid argument");
    CHECK(longhaul::sftp::apply_sftp_x_option("buffer=-1", buffer, requests) == "Invalid buffer size \"-1\": Invalid argument");
    CHECK(longhaul::sftp::apply_sftp_x_option("buffer=99999999999999999999999", buffer, requests) ==
          "Invalid buffer size \"99999999999999999999999\": Numerical result out of range");
    CHECK(longhaul::sftp::apply_sftp_x_option("buffer=65536", buffer, requests).empty());
    // OpenSSH's bound, then ours.
    CHECK(longhaul::sftp::apply_sftp_x_option("nrequests=262144", buffer, requests).empty());
    CHECK(requests == longhaul::sftp::max_requests_in_flight);
    CHECK(longhaul::sftp::apply_sftp_x_option("nrequests=262145", buffer, requests) ==
          "Invalid number of requests \"262145\": too large");
    CHECK(longhaul::sftp::apply_sftp_x_option("nrequests=64", buffer, requests).empty());
    CHECK(longhaul::sftp::apply_sftp_x_option("nrequests=0", buffer, requests) == "Invalid number of requests \"0\": too small");
    CHECK(longhaul::sftp::apply_sftp_x_option("nrequests=-3", buffer, requests) ==
          "Invalid number of requests \"-3\": too small");
    CHECK(longhaul::sftp::apply_sftp_x_option("nrequests=99999999999999999999999", buffer, requests) ==
          "Invalid number of requests \"99999999999999999999999\": too large");
    CHECK(longhaul::sftp::apply_sftp_x_option("nrequests=1x", buffer, requests) == "Invalid number of requests \"1x\": invalid");
    CHECK(longhaul::sftp::apply_sftp_x_option("nrequests=", buffer, requests) == "Invalid number of requests \"\": invalid");
    // Only "buffer=" and "nrequests=", with their '='.
    CHECK(longhaul::sftp::apply_sftp_x_option("buffer", buffer, requests) == "Invalid -X option");
    CHECK(longhaul::sftp::apply_sftp_x_option("other=1", buffer, requests) == "Invalid -X option");
    CHECK(buffer == 65536);
    CHECK(requests == 64);
    // scp's fatal refusals and -M's usage.
    CHECK_THROWS_WITH_AS(parse({"-P", "x", "a", "h:b"}), "bad port \"x\"\n", option_error);
    CHECK_THROWS_WITH_AS(parse({"-1", "a", "h:b"}), "SSH protocol v.1 is no longer supported", option_error);
    CHECK_THROWS_AS(parse({"-M", "x", "a", "h:b"}), usage_error);
}
