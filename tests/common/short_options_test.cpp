#include "common/short_options.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace longhaul;

namespace {

using words = std::vector<std::string>;

// The options seen, as "-a", "-bARG": one string per call.
struct recorder {
    std::vector<std::string> seen;
    char stop_at = 0;

    short_option_handler handler()
    {
        return [this](char c, const std::string& argument) {
            seen.push_back(std::string("-") + c + argument);
            return c != stop_at;
        };
    }
};

} // namespace

TEST_CASE("short_options: groups, attached and separate arguments, operands")
{
    recorder r;
    const words w{"prog", "-vk", "-tfoo", "-t", "bar", "-vEsha256", "host", "-v"};
    const auto scan = scan_short_options(w, 1, "vkt:E:", r.handler());
    CHECK(scan.ok());
    CHECK(scan.next == 6); // "host": the options end at the first operand
    CHECK(r.seen == std::vector<std::string>{"-v", "-k", "-tfoo", "-tbar", "-v", "-Esha256"});
}

TEST_CASE("short_options: -- ends the options, - alone is an operand")
{
    recorder r;
    auto scan = scan_short_options(words{"-v", "--", "-k"}, 0, "vk", r.handler());
    CHECK(scan.ok());
    CHECK(scan.next == 2);
    CHECK(r.seen == std::vector<std::string>{"-v"});

    scan = scan_short_options(words{"-", "-v"}, 0, "v", r.handler());
    CHECK(scan.ok());
    CHECK(scan.next == 0);

    // "--" as an option's argument is only an argument.
    r.seen.clear();
    scan = scan_short_options(words{"-t", "--", "-v", "x"}, 0, "vt:", r.handler());
    CHECK(scan.ok());
    CHECK(scan.next == 3);
    CHECK(r.seen == std::vector<std::string>{"-t--", "-v"});

    scan = scan_short_options(words{}, 0, "v", r.handler());
    CHECK(scan.ok());
    CHECK(scan.next == 0);
}

TEST_CASE("short_options: getopt's two complaints, after the options before them")
{
    recorder r;
    auto scan = scan_short_options(words{"-v", "-kx", "-v"}, 0, "vk", r.handler());
    CHECK_FALSE(scan.ok());
    CHECK(scan.error == "unknown option -- x");
    CHECK(r.seen == std::vector<std::string>{"-v", "-k"});

    // ':' is never an option letter, even though the string holds it.
    r.seen.clear();
    scan = scan_short_options(words{"-:"}, 0, "t:", r.handler());
    CHECK(scan.error == "unknown option -- :");
    CHECK(r.seen.empty());

    scan = scan_short_options(words{"-v", "-t"}, 0, "vt:", r.handler());
    CHECK(scan.error == "option requires an argument -- t");
    CHECK_FALSE(scan.stopped);

    // An empty attached argument does not exist: the next word is taken.
    r.seen.clear();
    scan = scan_short_options(words{"-vt", ""}, 0, "vt:", r.handler());
    CHECK(scan.ok());
    CHECK(r.seen == std::vector<std::string>{"-v", "-t"});
}

TEST_CASE("short_options: the handler stops the scan")
{
    recorder r;
    r.stop_at = 'V';
    auto scan = scan_short_options(words{"-vVk", "-k"}, 0, "vVk", r.handler());
    CHECK(scan.stopped);
    CHECK(scan.error.empty());
    CHECK_FALSE(scan.ok());
    CHECK(scan.next == 1);
    CHECK(r.seen == std::vector<std::string>{"-v", "-V"});

    r.seen.clear();
    r.stop_at = 'c';
    scan = scan_short_options(words{"prog", "-c", "ls -l", "-v"}, 1, "c:v", r.handler());
    CHECK(scan.stopped);
    CHECK(scan.next == 3);
    CHECK(r.seen == std::vector<std::string>{"-cls -l"});
}
