#include "common/text_parse.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

TEST_CASE("text_parse: iequals")
{
    CHECK(iequals("none", "NONE"));
    CHECK(iequals("KexAlgorithms", "kexalgorithms"));
    CHECK(iequals("", ""));
    CHECK_FALSE(iequals("none", "non"));
    CHECK_FALSE(iequals("no-pty", "no_pty"));
    // Bytes outside ASCII compare as they are.
    CHECK(iequals("\xc3\xa9", "\xc3\xa9"));
    CHECK_FALSE(iequals("\xc3\xa9", "\xc3\x89"));
}

TEST_CASE("text_parse: lowercase")
{
    CHECK(lowercase("Web1.Example.ORG") == "web1.example.org");
    CHECK(lowercase("[HOST]:2222") == "[host]:2222");
    CHECK(lowercase("") == "");
}
