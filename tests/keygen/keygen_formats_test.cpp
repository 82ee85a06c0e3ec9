// ssh-keygen -i's RFC 4716 reader and -r's SSHFP records (keygen_formats).
// The programs' output is compared with Debian's in ssh_keygen_compat.sh.
#include "ssh/keygen/keygen_formats.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/private_key.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

TEST_CASE("keygen formats: RFC 4716 public keys")
{
    const public_key key = private_key::generate(key_type::ed25519)->public_part();
    const std::string b64 = base64_encode(key.blob());
    const std::string split = b64.substr(0, 20) + "\n" + b64.substr(20) + "\n";
    const std::string text = "---- BEGIN SSH2 PUBLIC KEY ----\nComment: \"two \\\nlines\"\nx-tag: v\n" + split +
                             "---- END SSH2 PUBLIC KEY ----\nafter the end\n";
    auto blob = read_rfc4716_blob(text);
    REQUIRE(blob);
    CHECK(*blob == key.blob());
    // CR LF lines too.
    std::string crlf;
    for (char c : text)
        crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    blob = read_rfc4716_blob(crlf);
    REQUIRE(blob);
    CHECK(*blob == key.blob());
    // Not base64: an OpenSSH line, or nothing at all.
    CHECK(read_rfc4716_blob(format_public_key(key)).error() == errc::invalid_format);
    CHECK(read_rfc4716_blob("---- BEGIN SSH2 PUBLIC KEY ----\n!!!!\n---- END SSH2 PUBLIC KEY ----\n").error() ==
          errc::invalid_format);
    CHECK(read_rfc4716_blob("---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nAAAA\n").error() == errc::unsupported);
}

TEST_CASE("keygen formats: SSHFP records")
{
    // tests/data/certs/ca_ed25519.pub, its records as Debian's ssh-keygen -r prints them.
    auto line = parse_public_key_line(
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDDj6l9lKLwNyWpYax5hxQs+hb59pe/4deIOvBivwR9Q longhaul test CA");
    REQUIRE(line);
    const std::string plain = sshfp_records(line->key, "h.example", false);
    CHECK(plain.starts_with("h.example IN SSHFP 4 1 "));
    CHECK(plain.find("\nh.example IN SSHFP 4 2 ") != std::string::npos);
    const std::string generic = sshfp_records(line->key, "h.example", true);
    CHECK(generic.starts_with("h.example IN TYPE44 \\# 22 04 01 "));
    CHECK(generic.find("\nh.example IN TYPE44 \\# 34 04 02 ") != std::string::npos);
    // The SHA-256 record is the hex of the fingerprint's digest.
    CHECK(plain.size() == std::string("h.example IN SSHFP 4 1 \n").size() + 40 +
                               std::string("h.example IN SSHFP 4 2 \n").size() + 64);
}
