#include "common/keys/bcrypt_pbkdf.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace longhaul;

namespace {

std::string kdf_hex(std::string_view password, std::string_view salt, std::uint32_t rounds, std::size_t n)
{
    bytes out(n);
    auto r = bcrypt_pbkdf(as_bytes(password), as_bytes(salt), rounds, out);
    REQUIRE(r.has_value());
    return to_hex(out);
}

using namespace std::string_view_literals;

} // namespace

TEST_CASE("bcrypt_pbkdf: OpenBSD regress vectors")
{
    // From OpenBSD's regress/lib/libutil/bcrypt_pbkdf (also carried by other
    // implementations' test suites).
    CHECK(kdf_hex("password", "salt", 4, 32) == "5bbf0cc293587f1c3635555c27796598d47e579071bf427e9d8fbe842aba34d9");
    CHECK(kdf_hex("password", "\0"sv, 4, 16) == "c12b566235eee04c212598970a579a67");
    CHECK(kdf_hex("\0"sv, "salt", 4, 16) == "6051be18c2f4f82cbf0efee5471b4bb9");
    CHECK(kdf_hex("password\0"sv, "salt\0"sv, 4, 32) ==
          "7410e44cf4fa07bfaac8a928b1727fac001375e7bf7384370f48efd121743050");
    CHECK(kdf_hex("pass\0wor"sv, "sa\0l"sv, 4, 16) == "c2bffd9db38f6569efef4372f4de83c0");
    CHECK(kdf_hex("pass\0word"sv, "sa\0lt"sv, 4, 16) == "4ba4ac3925c0e8d7f0cdb6bb1684a56f");
    // 64 bytes: two interleaved blocks.
    CHECK(kdf_hex("password", "salt", 8, 64) ==
          "e1367ec5151a33faac4cc1c144cd23fa15d5548493ecc99b9b5d9c0d3b27bec76227ea66088b849b20ab7aa478010246e74bba51723f"
          "efa9f9474d6508845e8d");
    CHECK(kdf_hex("password", "salt", 42, 16) == "833cf0dcf56db65608e8f0dc0ce882bd");
    CHECK(kdf_hex("Lorem ipsum dolor sit amet, consectetur adipisicing elit, "
                  "sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. "
                  "Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris "
                  "nisi ut aliquip ex ea commodo consequat. "
                  "Duis aute irure dolor in reprehenderit in voluptate velit esse cillum "
                  "dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat non "
                  "proident, sunt in culpa qui officia deserunt mollit anim id est laborum.",
                  "salis\0"sv, 8, 16) == "10978b07253df57f71a162eb0e8ad30a");
}

TEST_CASE("bcrypt_pbkdf: a prefix of the output is not a shorter derivation")
{
    // Interleaving means the first 16 bytes of a 48-byte output differ from a
    // 16-byte output; this is what makes key+IV derivation one operation.
    auto long_out = kdf_hex("password", "salt", 4, 48);
    auto short_out = kdf_hex("password", "salt", 4, 16);
    CHECK(long_out.substr(0, 32) != short_out);
}

TEST_CASE("bcrypt_pbkdf: argument checks")
{
    bytes out(32);
    CHECK(bcrypt_pbkdf(as_bytes(""), as_bytes("salt"), 4, out).error() == errc::invalid_argument);
    CHECK(bcrypt_pbkdf(as_bytes("pw"), as_bytes(""), 4, out).error() == errc::invalid_argument);
    CHECK(bcrypt_pbkdf(as_bytes("pw"), as_bytes("salt"), 0, out).error() == errc::invalid_argument);
    bytes too_long(bcrypt_pbkdf_max_output + 1);
    CHECK(bcrypt_pbkdf(as_bytes("pw"), as_bytes("salt"), 1, too_long).error() == errc::invalid_argument);
    CHECK(bcrypt_pbkdf(as_bytes("pw"), as_bytes("salt"), 1, mutable_byte_span{}).error() == errc::invalid_argument);
}
