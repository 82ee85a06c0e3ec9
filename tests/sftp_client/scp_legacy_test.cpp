// The name scp -O sends for a source: as it is, unless it holds a newline
// (a record is one line), then encoded as OpenSSH's scp encodes it
// (strnvis with VIS_NL), byte for byte what Debian's scp -O sends.
#include "ssh/scp/scp_legacy.hpp"

#include <doctest/doctest.h>

#include <climits>
#include <string>

using longhaul::scp::legacy_wire_name;

TEST_CASE("scp legacy: a name without a newline is sent as it is")
{
    CHECK(legacy_wire_name("plain") == "plain");
    CHECK(legacy_wire_name("dir/with space\tand tab") == "dir/with space\tand tab");
    // Backslashes, control characters and high bytes stay raw too.
    CHECK(legacy_wire_name("back\\slash") == "back\\slash");
    CHECK(legacy_wire_name("c\rr\x01\xe9") == "c\rr\x01\xe9");
    CHECK(legacy_wire_name("") == "");
}

TEST_CASE("scp legacy: a name with a newline is encoded whole, as strnvis(VIS_NL)")
{
    CHECK(legacy_wire_name("new\nline") == "new\\^Jline");
    CHECK(legacy_wire_name("src/new\nline") == "src/new\\^Jline");
    // Once encoded, every other byte that is not graphic ASCII, space or
    // tab is encoded too, and a backslash is doubled.
    CHECK(legacy_wire_name("a\\b\n") == "a\\\\b\\^J");
    CHECK(legacy_wire_name("\n\r\x01\x7f") == "\\^J\\^M\\^A\\^?");
    // A high byte: "\M-" and the low seven bits, "\M^" for a control one.
    CHECK(legacy_wire_name("\n\xe9\x80\xff\xa0 \t~") == "\\^J\\M-i\\M^@\\M^?\\240 \t~");
    // strnvis() fills a PATH_MAX buffer and stops before a sequence that
    // does not fit whole.
    const std::string long_name = "\n" + std::string(PATH_MAX, 'a');
    const std::string encoded = legacy_wire_name(long_name);
    CHECK(encoded.size() == PATH_MAX - 1);
    CHECK(encoded.substr(0, 4) == "\\^Ja");
    const std::string edge = std::string(PATH_MAX - 3, 'b') + "\n";
    CHECK(legacy_wire_name(edge) == std::string(PATH_MAX - 3, 'b')); // "\^J" would need 3 more
}

TEST_CASE("scp legacy: messages on stderr escaped as OpenSSH's fmprintf does")
{
    using longhaul::scp::legacy_stderr_text;
    // Tab, newline and carriage return stay; other controls, DEL and
    // bytes that are not UTF-8 become \ooo (as Debian's scp prints them).
    CHECK(legacy_stderr_text("no\x01\r\xe9such\tx\ny\x7f", true) == "no\\001\r\\351such\tx\ny\\177");
    // A UTF-8 character stays in a UTF-8 locale, is escaped byte by byte
    // in C; a C1 control (U+0085), a truncated or an overlong sequence and
    // a surrogate are escaped in both.
    CHECK(legacy_stderr_text("\xc3\xa9", true) == "\xc3\xa9");
    CHECK(legacy_stderr_text("\xc3\xa9", false) == "\\303\\251");
    CHECK(legacy_stderr_text("\xc2\x85", true) == "\\302\\205");
    CHECK(legacy_stderr_text("\xe2\x82", true) == "\\342\\202");
    CHECK(legacy_stderr_text("\xe0\x80\x80", true) == "\\340\\200\\200");
    CHECK(legacy_stderr_text("\xed\xa0\x80", true) == "\\355\\240\\200");
    CHECK(legacy_stderr_text("\xe2\x82\xac\xf0\x9f\x98\x80", true) == "\xe2\x82\xac\xf0\x9f\x98\x80");
    CHECK(legacy_stderr_text("plain: No such file or directory", false) == "plain: No such file or directory");
}
