#include "common/name_list.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

TEST_CASE("name_list: the client's first choice the server supports wins")
{
    CHECK(negotiate("a,b,c", "c,b") == "b");
    CHECK(negotiate("aes128-ctr,aes256-ctr", "aes256-ctr,aes128-ctr") == "aes128-ctr");
    CHECK_FALSE(negotiate("a,b", "c,d").has_value());
    CHECK_FALSE(negotiate("", "a").has_value());
    CHECK(negotiate("x,,y", "y") == "y");
}

TEST_CASE("name_list: split, join and contains")
{
    auto v = split_name_list("one,two,,three");
    REQUIRE(v.size() == 3);
    CHECK(v[2] == "three");
    CHECK(join_name_list(v) == "one,two,three");
    CHECK(name_list_contains("kex-strict-s-v00@openssh.com,ext-info-s", "ext-info-s"));
    CHECK_FALSE(name_list_contains("ext-info-sx", "ext-info-s"));
}
