#include "sshd/rexec_state.hpp"

#include "common/wire.hpp"
#include "sshd/sshd_config.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace longhaul;

namespace {

rexec_state rexec_sample_state()
{
    rexec_state s;
    s.config.files = {{"/etc/ssh/sshd_config", "Port 2222\nInclude /etc/ssh/sshd_config.d/*.conf\n"},
                      {"/etc/ssh/sshd_config.d/a.conf", "PasswordAuthentication no\n"}};
    s.config.globs = {{"/etc/ssh/sshd_config.d/*.conf", {"/etc/ssh/sshd_config.d/a.conf"}}};
    const std::string key = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot really\n-----END OPENSSH PRIVATE KEY-----\n";
    s.host_keys.emplace_back(as_bytes(key));
    s.moduli = "20230101000000 2 6 100 2047 2 FFFF\n";
    return s;
}

std::string rexec_temp_dir()
{
    char pattern[] = "/tmp/lh-rexec-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    return pattern;
}

} // namespace

TEST_CASE("rexec_state: what the listener encodes decodes to the same state")
{
    const rexec_state s = rexec_sample_state();
    auto enc = encode_rexec_state(s);
    REQUIRE(enc);
    auto dec = decode_rexec_state(enc->span());
    REQUIRE(dec);
    CHECK(dec->config.files == s.config.files);
    CHECK(dec->config.globs == s.config.globs);
    REQUIRE(dec->host_keys.size() == 1);
    CHECK(as_string_view(dec->host_keys[0].span()) == as_string_view(s.host_keys[0].span()));
    CHECK(dec->moduli == s.moduli);

    rexec_state empty;
    auto enc2 = encode_rexec_state(empty);
    REQUIRE(enc2);
    auto dec2 = decode_rexec_state(enc2->span());
    REQUIRE(dec2);
    CHECK(dec2->config.files.empty());
    CHECK_FALSE(dec2->moduli.has_value());
}

TEST_CASE("rexec_state: truncated, extended, foreign or oversized states are refused")
{
    auto enc = encode_rexec_state(rexec_sample_state());
    REQUIRE(enc);
    const byte_span all = enc->span();
    for (std::size_t n = 0; n < all.size(); ++n)
        CHECK_FALSE(decode_rexec_state(all.first(n)));
    bytes longer(all.begin(), all.end());
    longer.push_back(0);
    CHECK_FALSE(decode_rexec_state(longer));
    bytes foreign(all.begin(), all.end());
    foreign[4] ^= 1; // the magic
    CHECK_FALSE(decode_rexec_state(foreign));

    // A count past the bounds fails before anything is allocated for it.
    bytes huge;
    wire_writer w(huge);
    w.string("longhaul-sshd-rexec-1").u32(0xffffffffu);
    CHECK_FALSE(decode_rexec_state(huge));
    // The moduli flag is 0 or 1.
    bytes flag;
    wire_writer f(flag);
    f.string("longhaul-sshd-rexec-1").u32(0).u32(0).u32(0).u8(2);
    CHECK_FALSE(decode_rexec_state(flag));

    rexec_state too_many;
    too_many.host_keys.resize(rexec_max_keys + 1);
    CHECK(encode_rexec_state(too_many).error() == errc::too_large);
}

TEST_CASE("rexec_state: the memfd is sealed and reads back whole")
{
    auto enc = encode_rexec_state(rexec_sample_state());
    REQUIRE(enc);
    std::string error;
    const int fd = make_rexec_state_fd(enc->span(), error);
    REQUIRE_MESSAGE(fd >= 0, error);
    CHECK(::write(fd, "x", 1) < 0); // F_SEAL_WRITE
    auto back = read_rexec_state_fd(fd);
    ::close(fd);
    REQUIRE(back);
    CHECK(as_string_view(back->span()) == as_string_view(enc->span()));
}

TEST_CASE("sshd_config: replayed sources give the configuration the files gave, whatever the disk says now")
{
    const std::string dir = rexec_temp_dir();
    std::filesystem::create_directory(dir + "/conf.d");
    std::ofstream(dir + "/sshd_config") << "Port 2022\nInclude " << dir << "/conf.d/*.conf\nMaxAuthTries 4\n";
    std::ofstream(dir + "/conf.d/b.conf") << "LoginGraceTime 33\n";
    std::ofstream(dir + "/conf.d/a.conf") << "MaxSessions 7\n";
    config_load_options lo;
    lo.path = dir + "/sshd_config";
    lo.resolve_addresses = false;
    const sshd_config first = sshd_config::load(lo);
    const config_sources& src = first.sources();
    REQUIRE(src.files.size() == 3);
    CHECK(src.files[1].first == dir + "/conf.d/a.conf"); // glob(3) order
    REQUIRE(src.globs.size() == 1);
    CHECK(src.globs[0].second.size() == 2);

    // The disk changes; the replay does not see it.
    std::ofstream(dir + "/sshd_config") << "Port 9999\n";
    std::filesystem::remove_all(dir + "/conf.d");
    lo.replay = std::make_shared<const config_sources>(src);
    const sshd_config again = sshd_config::load(lo);
    CHECK(again.global().ports == first.global().ports);
    CHECK(again.global().ports == std::vector<int>{2022});
    CHECK(again.global().max_sessions == 7);
    CHECK(again.global().login_grace_time == 33);
    CHECK(again.global().max_auth_tries == 4);

    // A file the sources lack reads as missing.
    config_load_options other = lo;
    other.path = dir + "/elsewhere";
    CHECK_THROWS_AS(sshd_config::load(other), config_error);
    std::filesystem::remove_all(dir);
}
