#include "common/temp_name.hpp"

#include "tests/counting_random.hpp"

#include <doctest/doctest.h>

#include <set>

using namespace longhaul;

namespace {

bool is_name_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

} // namespace

TEST_CASE("temp names: every trailing X but the last `keep` is replaced, as OpenSSH's mkdtemp does")
{
    test::counting_random rng;
    // Bytes 0, 1, 2...: the first letters of the alphabet in turn.
    CHECK(fill_temp_template("/tmp/ssh-XXXXXXXXXXXX", rng) == "/tmp/ssh-ABCDEFXXXXXX");
    CHECK(fill_temp_template("/tmp/ssh-XXXXXXXXXXXX", rng, 0).substr(0, 9) == "/tmp/ssh-");
    const std::string all = fill_temp_template("/tmp/ssh-XXXXXXXXXXXX", 0);
    REQUIRE(all.size() == 21);
    for (char c : all.substr(9))
        CHECK(is_name_char(c));
    // Only the trailing run: an X elsewhere stays, and so does a template
    // with no more X's than mkdtemp replaces.
    CHECK(fill_temp_template("/tmp/X-dir.XXXXXXXX", rng).substr(0, 11) == "/tmp/X-dir.");
    CHECK(fill_temp_template("/tmp/X-dir.XXXXXXXX", rng).substr(13) == "XXXXXX");
    CHECK(fill_temp_template("name.XXXXXX", rng) == "name.XXXXXX");
    CHECK(fill_temp_template("name", rng, 0) == "name");
    CHECK(fill_temp_template("", rng, 0).empty());
}

TEST_CASE("temp names: bytes past 4 x 62 are skipped, so no letter is favoured")
{
    // A stream of 248..255 then 0..: the first eight bytes are skipped.
    test::counting_random rng(248);
    CHECK(fill_temp_template("XXX", rng, 0) == "ABC");
    // Different names from the system's source.
    std::set<std::string> seen;
    for (int i = 0; i < 20; ++i)
        seen.insert(fill_temp_template("/tmp/ssh-XXXXXXXXXX", 4));
    CHECK(seen.size() == 20);
}
