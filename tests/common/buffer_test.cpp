#include "common/buffer.hpp"

#include <doctest/doctest.h>

#include <cstring>

using namespace longhaul;

TEST_CASE("byte_buffer: prepare/commit/consume keep bytes in order")
{
    byte_buffer b;
    std::uint32_t next_in = 0, next_out = 0;
    for (int round = 0; round < 1000; ++round) {
        std::size_t n = 1 + (round * 37) % 300;
        auto dst = b.prepare(n);
        REQUIRE(dst.size() == n);
        for (auto& c : dst)
            c = static_cast<std::uint8_t>(next_in++);
        b.commit(n);
        std::size_t take = (round * 53) % (b.size() + 1);
        for (std::size_t i = 0; i < take; ++i)
            REQUIRE(b.data()[i] == static_cast<std::uint8_t>(next_out++));
        b.consume(take);
    }
}

TEST_CASE("byte_buffer: max size is enforced")
{
    byte_buffer b(10);
    CHECK(b.append(as_bytes("0123456789")));
    CHECK_FALSE(b.append(as_bytes("x")));
    CHECK(b.prepare(1).empty());
    b.consume(5);
    CHECK(b.append(as_bytes("abcde")));
    CHECK(as_string_view(b.data()) == "56789abcde");
}
