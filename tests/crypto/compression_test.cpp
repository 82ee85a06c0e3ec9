#include "common/crypto/compression.hpp"

#include <doctest/doctest.h>

#include <zlib.h>

#include <random>
#include <string>

using namespace longhaul;

namespace {

bytes text_payload(std::size_t n, unsigned seed)
{
    static const std::string words[] = {"channel ", "window ", "adjust ", "data ", "longhaul ", "bulk ", "ssh "};
    std::mt19937 rng(seed);
    bytes out;
    while (out.size() < n) {
        const auto& w = words[rng() % std::size(words)];
        out.insert(out.end(), w.begin(), w.end());
    }
    out.resize(n);
    return out;
}

constexpr std::size_t max_payload = 256 * 1024;

} // namespace

TEST_CASE("compression: names")
{
    REQUIRE(find_compression("zlib@openssh.com") != nullptr);
    CHECK(find_compression("zlib@openssh.com")->delayed);
    REQUIRE(find_compression("zlib") != nullptr);
    CHECK_FALSE(find_compression("zlib")->delayed);
    CHECK(find_compression("none") != nullptr);
    CHECK(find_compression("lz4") == nullptr);
    CHECK(supported_compressions().front() == "zlib@openssh.com");
}

TEST_CASE("compression: one stream, packet after packet, each decodable on arrival")
{
    compressor comp;
    decompressor decomp;
    bytes wire;  // reused, as the transport reuses its buffers
    bytes plain;
    std::mt19937 rng(5);
    for (int i = 0; i < 200; ++i) {
        CAPTURE(i);
        bytes payload = text_payload(1 + rng() % 40000, unsigned(i));
        if (i % 7 == 3) // incompressible packets mixed in
            for (auto& b : payload)
                b = std::uint8_t(rng());
        wire.clear();
        REQUIRE(comp.compress(payload, wire).has_value());
        plain.clear();
        REQUIRE(decomp.decompress(wire, plain, max_payload).has_value());
        CHECK(plain == payload);
    }
    // Later packets refer back to earlier ones: a repeat of incompressible
    // bytes compresses to a few hundred bytes of back-references.
    bytes repeat(20000);
    for (auto& b : repeat)
        b = std::uint8_t(rng());
    wire.clear();
    REQUIRE(comp.compress(repeat, wire).has_value());
    wire.clear();
    REQUIRE(comp.compress(repeat, wire).has_value());
    CHECK(wire.size() < 1000);
    CHECK(comp.total_in() > comp.total_out());
}

TEST_CASE("compression: output is appended after what the buffer held")
{
    compressor comp;
    decompressor decomp;
    bytes wire{1, 2, 3};
    REQUIRE(comp.compress(as_bytes("hello"), wire).has_value());
    CHECK(wire[0] == 1);
    bytes plain{9};
    REQUIRE(decomp.decompress(byte_span(wire).subspan(3), plain, 100).has_value());
    CHECK(as_string_view(byte_span(plain).subspan(1)) == "hello");
    CHECK(plain[0] == 9);
}

TEST_CASE("compression: the stream is zlib's, flushed per packet (interoperates with plain inflate)")
{
    compressor comp;
    bytes wire;
    REQUIRE(comp.compress(as_bytes("first packet"), wire).has_value());
    // A partial flush ends on an empty static block so a byte-aligned sync is
    // not required: decode with zlib directly and Z_SYNC_FLUSH.
    z_stream z{};
    REQUIRE(inflateInit(&z) == Z_OK);
    unsigned char out[64];
    z.next_in = wire.data();
    z.avail_in = uInt(wire.size());
    z.next_out = out;
    z.avail_out = sizeof out;
    CHECK(inflate(&z, Z_SYNC_FLUSH) == Z_OK);
    CHECK(std::string(reinterpret_cast<char*>(out), sizeof out - z.avail_out) == "first packet");
    inflateEnd(&z);
}

TEST_CASE("compression: a decompression bomb stops at the cap")
{
    compressor comp(9);
    decompressor decomp;
    const bytes zeros(4 * 1024 * 1024, 0);
    bytes wire;
    REQUIRE(comp.compress(zeros, wire).has_value());
    CHECK(wire.size() < 8 * 1024); // the whole bomb fits in one packet
    bytes out{7};
    CHECK(decomp.decompress(wire, out, max_payload).error() == errc::too_large);
    CHECK(out == bytes{7}); // left as it was
    CHECK(out.capacity() < max_payload + 64 * 1024);
    // The stream is dead afterwards.
    CHECK(decomp.decompress(wire, out, max_payload).error() == errc::compression_error);
}

TEST_CASE("compression: output exactly at the cap is accepted")
{
    compressor comp;
    const bytes payload = text_payload(5000, 3);
    bytes wire;
    REQUIRE(comp.compress(payload, wire).has_value());
    {
        decompressor d;
        bytes out;
        REQUIRE(d.decompress(wire, out, 5000).has_value());
        CHECK(out == payload);
    }
    {
        decompressor d;
        bytes out;
        CHECK(d.decompress(wire, out, 4999).error() == errc::too_large);
    }
}

TEST_CASE("compression: corrupt or truncated streams fail cleanly")
{
    compressor comp;
    bytes wire;
    REQUIRE(comp.compress(text_payload(3000, 1), wire).has_value());

    SUBCASE("garbage header")
    {
        decompressor d;
        bytes out;
        const bytes junk{0xff, 0xff, 0xff, 0xff, 0x00, 0x12};
        CHECK(d.decompress(junk, out, max_payload).error() == errc::compression_error);
        CHECK(out.empty());
    }
    SUBCASE("random bytes after a valid header never crash")
    {
        std::mt19937 rng(8);
        for (int i = 0; i < 500; ++i) {
            decompressor d;
            bytes junk = wire;
            junk.resize(2 + rng() % wire.size());
            for (std::size_t j = 2; j < junk.size(); ++j)
                if (rng() % 4 == 0)
                    junk[j] = std::uint8_t(rng());
            bytes out;
            auto r = d.decompress(junk, out, 4096);
            if (r)
                CHECK(out.size() <= 4096);
        }
    }
    SUBCASE("a stream that ends is refused")
    {
        bytes finished(256);
        uLongf n = finished.size();
        REQUIRE(compress2(finished.data(), &n, reinterpret_cast<const Bytef*>("bye"), 3, 6) == Z_OK);
        finished.resize(n);
        decompressor d;
        bytes out;
        CHECK(d.decompress(finished, out, max_payload).error() == errc::compression_error);
    }
    SUBCASE("a packet split in two still decodes in order")
    {
        decompressor d;
        bytes out;
        const std::size_t half = wire.size() / 2;
        REQUIRE(d.decompress(byte_span(wire).first(half), out, max_payload).has_value());
        REQUIRE(d.decompress(byte_span(wire).subspan(half), out, max_payload).has_value());
        CHECK(out == text_payload(3000, 1));
    }
}

TEST_CASE("compression: moved streams keep their state")
{
    compressor a;
    bytes wire;
    REQUIRE(a.compress(as_bytes("one "), wire).has_value());
    compressor b = std::move(a);
    REQUIRE(b.compress(as_bytes("two"), wire).has_value());
    decompressor d;
    decompressor e = std::move(d);
    bytes out;
    REQUIRE(e.decompress(wire, out, 100).has_value());
    CHECK(as_string_view(out) == "one two");
    CHECK(a.compress(as_bytes("x"), wire).error() == errc::compression_error); // moved-from
}
