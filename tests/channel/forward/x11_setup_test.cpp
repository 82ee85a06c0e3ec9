#include "channel/forward/x11_setup.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::forward;

namespace {

// An X11 connection setup in either byte order, as an X client sends it.
bytes x11_test_setup(bool msb, std::string_view proto, const bytes& data)
{
    bytes b{static_cast<std::uint8_t>(msb ? 0x42 : 0x6c), 0};
    auto put16 = [&](std::size_t v) {
        if (msb) {
            b.push_back(static_cast<std::uint8_t>(v >> 8));
            b.push_back(static_cast<std::uint8_t>(v));
        } else {
            b.push_back(static_cast<std::uint8_t>(v));
            b.push_back(static_cast<std::uint8_t>(v >> 8));
        }
    };
    put16(11);
    put16(0);
    put16(proto.size());
    put16(data.size());
    b.push_back(0);
    b.push_back(0);
    b.insert(b.end(), proto.begin(), proto.end());
    while (b.size() % 4)
        b.push_back(0);
    b.insert(b.end(), data.begin(), data.end());
    while (b.size() % 4)
        b.push_back(0);
    return b;
}

const std::string x11_test_proto = "MIT-MAGIC-COOKIE-1";
const bytes x11_test_fake(16, 0xaa);
const bytes x11_test_real{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

} // namespace

TEST_CASE("x11 setup: the fake cookie is replaced by the real one, both byte orders")
{
    for (bool msb : {true, false}) {
        CAPTURE(msb);
        bytes s = x11_test_setup(msb, x11_test_proto, x11_test_fake);
        const std::size_t whole = s.size();
        s.push_back('X'); // the first request after the setup is left alone
        auto r = x11_check_setup(s, x11_test_proto, x11_test_fake, x11_test_real);
        REQUIRE(r.verdict == x11_setup_verdict::accepted);
        CHECK(r.length == whole);
        CHECK(s == [&] {
            bytes e = x11_test_setup(msb, x11_test_proto, x11_test_real);
            e.push_back('X');
            return e;
        }());
    }
}

TEST_CASE("x11 setup: split anywhere, it waits for the whole setup")
{
    const bytes full = x11_test_setup(false, x11_test_proto, x11_test_fake);
    for (std::size_t n = 0; n < full.size(); ++n) {
        bytes part(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        auto r = x11_check_setup(part, x11_test_proto, x11_test_fake, x11_test_real);
        CHECK(r.verdict == x11_setup_verdict::incomplete);
        CHECK(part == bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n))); // untouched
    }
    bytes whole = full;
    CHECK(x11_check_setup(whole, x11_test_proto, x11_test_fake, x11_test_real).verdict == x11_setup_verdict::accepted);
}

TEST_CASE("x11 setup: refusals, with OpenSSH's reasons")
{
    SUBCASE("bad byte order byte")
    {
        bytes s = x11_test_setup(true, x11_test_proto, x11_test_fake);
        s[0] = 0x41;
        auto r = x11_check_setup(s, x11_test_proto, x11_test_fake, x11_test_real);
        CHECK(r.verdict == x11_setup_verdict::rejected);
        CHECK(r.reason == "Initial X11 packet contains bad byte order byte: 0x41");
    }
    SUBCASE("bad byte order byte is seen with 12 bytes")
    {
        bytes s(12, 0);
        CHECK(x11_check_setup(s, x11_test_proto, x11_test_fake, x11_test_real).verdict ==
              x11_setup_verdict::rejected);
        bytes t(11, 0);
        CHECK(x11_check_setup(t, x11_test_proto, x11_test_fake, x11_test_real).verdict ==
              x11_setup_verdict::incomplete);
    }
    SUBCASE("wrong cookie")
    {
        bytes wrong = x11_test_fake;
        wrong[15] ^= 1;
        bytes s = x11_test_setup(true, x11_test_proto, wrong);
        const bytes before = s;
        auto r = x11_check_setup(s, x11_test_proto, x11_test_fake, x11_test_real);
        CHECK(r.verdict == x11_setup_verdict::rejected);
        CHECK(r.reason == "X11 auth data does not match fake data.");
        CHECK(s == before);
    }
    SUBCASE("the real cookie itself is refused too")
    {
        bytes s = x11_test_setup(false, x11_test_proto, x11_test_real);
        CHECK(x11_check_setup(s, x11_test_proto, x11_test_fake, x11_test_real).verdict ==
              x11_setup_verdict::rejected);
    }
    SUBCASE("cookie of another length")
    {
        bytes s = x11_test_setup(false, x11_test_proto, bytes(8, 0xaa));
        CHECK(x11_check_setup(s, x11_test_proto, x11_test_fake, x11_test_real).reason ==
              "X11 auth data does not match fake data.");
    }
    SUBCASE("no authorization at all")
    {
        bytes s = x11_test_setup(false, "", {});
        CHECK(x11_check_setup(s, x11_test_proto, x11_test_fake, x11_test_real).reason ==
              "X11 connection uses different authentication protocol.");
    }
    SUBCASE("another protocol")
    {
        bytes s = x11_test_setup(true, "XDM-AUTHORIZATION-1", x11_test_fake);
        CHECK(x11_check_setup(s, x11_test_proto, x11_test_fake, x11_test_real).reason ==
              "X11 connection uses different authentication protocol.");
    }
    SUBCASE("fake and real of different lengths")
    {
        bytes s = x11_test_setup(true, x11_test_proto, x11_test_fake);
        CHECK(x11_check_setup(s, x11_test_proto, x11_test_fake, bytes(8, 1)).reason ==
              "X11 fake_data_len 16 != saved_data_len 8");
    }
}

TEST_CASE("x11 setup: huge declared lengths wait, bounded by x11_setup_max")
{
    bytes s{0x42, 0, 0, 11, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0};
    auto r = x11_check_setup(s, x11_test_proto, x11_test_fake, x11_test_real);
    CHECK(r.verdict == x11_setup_verdict::incomplete);
    s.resize(x11_setup_max, 0);
    r = x11_check_setup(s, x11_test_proto, x11_test_fake, x11_test_real);
    CHECK(r.verdict == x11_setup_verdict::rejected);
    CHECK(r.reason == "X11 connection uses different authentication protocol.");
}
