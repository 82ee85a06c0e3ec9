#include "common/bytes.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

TEST_CASE("bytes: constant-time comparison")
{
    CHECK(equal_constant_time(as_bytes("abc"), as_bytes("abc")));
    CHECK_FALSE(equal_constant_time(as_bytes("abc"), as_bytes("abd")));
    CHECK_FALSE(equal_constant_time(as_bytes("abc"), as_bytes("ab")));
    CHECK(equal_constant_time({}, {}));
}

TEST_CASE("bytes: secret_bytes copies, moves and clears")
{
    secret_bytes a(as_bytes("key material"));
    secret_bytes b = a;
    CHECK(as_string_view(b) == "key material");
    secret_bytes c = std::move(a);
    CHECK(a.empty());
    CHECK(c.size() == 12);
    c.clear();
    CHECK(c.empty());
}

TEST_CASE("bytes: hex round trip and rejection")
{
    CHECK(to_hex(from_hex("00ff10Ab")) == "00ff10ab");
    CHECK(from_hex("0g").empty());
    CHECK(from_hex("abc").empty());
}
