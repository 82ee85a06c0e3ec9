#include "common/keys/base64.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

TEST_CASE("base64: RFC 4648 section 10 vectors")
{
    const char* cases[][2] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},        {"foo", "Zm9v"},
                              {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
    for (auto& c : cases) {
        CHECK(base64_encode(as_bytes(c[0])) == c[1]);
        auto d = base64_decode(c[1]);
        REQUIRE(d.has_value());
        CHECK(as_string_view(*d) == c[0]);
    }
    CHECK(base64_encode(as_bytes("f"), false) == "Zg");
    CHECK(base64_encode(as_bytes("fo"), false) == "Zm8");
}

TEST_CASE("base64: every byte value round-trips")
{
    bytes all(256);
    for (int i = 0; i < 256; ++i)
        all[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
    for (std::size_t n = 0; n <= all.size(); n += 1) {
        const byte_span part(all.data(), n);
        auto d = base64_decode(base64_encode(part));
        REQUIRE(d.has_value());
        CHECK(*d == to_bytes(part));
    }
    auto s = base64_decode_secret(base64_encode(all));
    REQUIRE(s.has_value());
    CHECK(to_bytes(s->span()) == all);
}

TEST_CASE("base64: strict decoding")
{
    for (const char* bad : {"Zg", "Zg=", "Zm9", "Z===", "====", "Zg==Zg==", "Zm9v\n", " Zm9v", "Zm-v", "Zm_v", "Zm9v=",
                            "Zh==", "Zm9=", "Zm:v", "Zg=a", "\xc3\xa9\xc3\xa9"}) {
        CAPTURE(bad);
        CHECK_FALSE(base64_decode(bad).has_value());
        CHECK_FALSE(base64_decode_secret(bad).has_value());
    }
    // Unused bits must be zero: "Zh==" and "Zm9=" would decode to "f"/"fo".
    CHECK(base64_decoded_size("Zm9vYg==") == 4);
    CHECK(base64_decoded_size("Zm9") == 0);
}

TEST_CASE("base64: armor")
{
    bytes data(100, 0xab);
    const auto text = armor_encode("TEST BLOCK", data, 70);
    CHECK(text.starts_with("-----BEGIN TEST BLOCK-----\n"));
    CHECK(text.ends_with("\n-----END TEST BLOCK-----\n"));
    // 100 bytes are 136 characters: lines of 70 and 66.
    CHECK(text.find("\n", 27) == 27 + 70);
    auto back = armor_decode(text, "TEST BLOCK");
    REQUIRE(back.has_value());
    CHECK(to_bytes(back->span()) == data);

    CHECK(armor_starts_with("  \n" + text, "TEST BLOCK"));
    CHECK(armor_decode("\n\n" + text + "\n \n", "TEST BLOCK").has_value());
    // CRLF line ends.
    std::string crlf;
    for (char c : text) {
        if (c == '\n')
            crlf += "\r\n";
        else
            crlf.push_back(c);
    }
    CHECK(armor_decode(crlf, "TEST BLOCK").has_value());

    CHECK(armor_decode(text, "OTHER BLOCK").error() == errc::invalid_format);
    CHECK(armor_decode(text + "trailing", "TEST BLOCK").error() == errc::invalid_format);
    CHECK(armor_decode(text.substr(0, text.size() - 10), "TEST BLOCK").error() == errc::invalid_format);
    CHECK(armor_decode("-----BEGIN TEST BLOCK-----\n-----END TEST BLOCK-----\n", "TEST BLOCK").error() ==
          errc::invalid_format);
    CHECK(armor_decode("-----BEGIN TEST BLOCK-----AAAA\n-----END TEST BLOCK-----\n", "TEST BLOCK").error() ==
          errc::invalid_format);
    auto broken = text;
    broken[30] = '*';
    CHECK(armor_decode(broken, "TEST BLOCK").error() == errc::invalid_format);
}
