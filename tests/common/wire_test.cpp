#include "common/wire.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

TEST_CASE("wire: writer and reader round-trip every RFC 4251 type")
{
    bytes buf;
    wire_writer w(buf);
    const std::uint8_t mag[] = {0x80, 0x01};
    w.u8(7).boolean(true).u32(0xdeadbeef).u64(0x0102030405060708ull).string("hello").mpint(mag).string("a,b,c");

    wire_reader r(buf);
    CHECK(r.u8() == 7);
    CHECK(r.boolean());
    CHECK(r.u32() == 0xdeadbeef);
    CHECK(r.u64() == 0x0102030405060708ull);
    CHECK(r.text() == "hello");
    auto m = r.mpint();
    CHECK(to_hex(m) == "8001");
    CHECK(r.name_list() == "a,b,c");
    CHECK(r.finish().has_value());
}

TEST_CASE("wire: RFC 4251 mpint examples")
{
    // The examples of RFC 4251 §5.
    struct {
        const char* magnitude;
        const char* encoded;
    } cases[] = {
        {"", "00000000"},
        {"09a378f9b2e332a7", "0000000809a378f9b2e332a7"},
        {"80", "000000020080"},
    };
    for (auto& c : cases) {
        bytes buf;
        wire_writer(buf).mpint(from_hex(c.magnitude));
        CHECK(to_hex(buf) == c.encoded);
        wire_reader r(buf);
        CHECK(to_hex(r.mpint()) == c.magnitude);
        CHECK(r.finish().has_value());
    }
    // -1234 (0xfb2e) and -0xdeadbeef are negative: never valid in SSH's uses.
    for (const char* neg : {"00000002edcc", "00000005ff21524111"}) {
        auto b = from_hex(neg);
        wire_reader r(b);
        r.mpint();
        CHECK(r.error() == errc::malformed);
    }
}

TEST_CASE("wire: leading zero bytes of an mpint are tolerated and stripped")
{
    auto b = from_hex("00000003000001");
    wire_reader r(b);
    CHECK(to_hex(r.mpint()) == "01");
    CHECK(r.finish().has_value());
}

TEST_CASE("wire: truncation at every byte is reported, never read past")
{
    bytes buf;
    wire_writer(buf).u32(1).string("payload").u64(2).mpint(from_hex("7f"));
    for (std::size_t cut = 0; cut < buf.size(); ++cut) {
        wire_reader r(byte_span(buf).first(cut));
        r.u32();
        r.string();
        r.u64();
        r.mpint();
        CHECK(r.error() == errc::incomplete);
        CHECK(r.remaining() == 0);
        CHECK_FALSE(r.finish().has_value());
    }
}

TEST_CASE("wire: lengths over the limit are too_large, trailing bytes are rejected")
{
    auto huge = from_hex("ffffffff00");
    wire_reader r(huge);
    r.string();
    CHECK(r.error() == errc::too_large);

    auto small = from_hex("0000000461626364");
    wire_reader r2(small);
    r2.string(3);
    CHECK(r2.error() == errc::too_large);

    auto extra = from_hex("0000000100");
    wire_reader r3(extra);
    r3.u32();
    CHECK(r3.finish().error() == errc::trailing_data);
}

TEST_CASE("wire: sticky failure returns empty values after the first error")
{
    auto b = from_hex("0000");
    wire_reader r(b);
    CHECK(r.u32() == 0);
    CHECK(r.u8() == 0);
    CHECK(r.string().empty());
    r.fail(errc::malformed); // the first error wins
    CHECK(r.error() == errc::incomplete);
}

TEST_CASE("wire: name-lists reject control and non-ASCII bytes")
{
    using namespace std::string_view_literals;
    for (auto bad : {"a b"sv, "a\tb"sv, "caf\xc3\xa9"sv, "a\0b"sv}) {
        bytes buf;
        wire_writer(buf).string(bad);
        wire_reader r(buf);
        r.name_list();
        CHECK(r.error() == errc::malformed);
    }
}

TEST_CASE("wire: nested strings are length-patched")
{
    bytes buf;
    wire_writer w(buf);
    auto mark = w.begin_string();
    w.string("inner").u32(5);
    w.end_string(mark);
    wire_reader r(buf);
    auto inner = r.string();
    CHECK(r.finish().has_value());
    wire_reader ri(inner);
    CHECK(ri.text() == "inner");
    CHECK(ri.u32() == 5);
    CHECK(ri.finish().has_value());
}
