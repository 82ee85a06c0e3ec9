// The sftp command line (ssh/sftp/sftp_command_line.hpp): words, prefixes
// and each command's flags and arguments, with OpenSSH's messages; and what
// a batch's first command looks up ahead (sftp_shell::first_flight).
#include "ssh/sftp/sftp_command_line.hpp"
#include "ssh/sftp/sftp_commands.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <string>
#include <vector>

using namespace longhaul;
using namespace longhaul::sftp_cli;

namespace {

struct parsed_line {
    int rc = 0;
    command_args a;
    line_marks m;
    std::vector<std::string> errors;
};

parsed_line parse_line(const std::string& line)
{
    parsed_line p;
    sftp::output_sink out;
    out.error = [&](const std::string& e) { p.errors.push_back(e); };
    p.rc = parse_command_line(line, p.a, p.m, out);
    return p;
}

} // namespace

TEST_CASE("sftp command line: words as OpenSSH's makeargv splits them")
{
    std::string error;
    auto w = split_words("put 'a b' \"c\\\"d\" e\\ f # comment", error);
    REQUIRE(w);
    CHECK(*w == std::vector<std::string>{"put", "a b", "c\"d", "e f"});
    // Glob characters quoted or escaped stay escaped for the glob.
    w = split_words("get '*.txt' \\?", error);
    REQUIRE(w);
    CHECK(*w == std::vector<std::string>{"get", "\\*.txt", "\\?"});
    CHECK(undo_glob_escape("\\*.txt") == "*.txt");
    CHECK(escape_glob("a*b?[c]\\") == "a\\*b\\?\\[c\\]\\\\");
    CHECK_FALSE(split_words("get 'open", error));
    CHECK_FALSE(error.empty());
}

TEST_CASE("sftp command line: prefixes, comments and commands with their flags and paths")
{
    auto p = parse_line("  -@get -p remote local\n");
    CHECK(p.rc == 0);
    CHECK(p.m.ignore_errors);
    CHECK(p.m.no_echo);
    CHECK(p.a.id == i_get);
    CHECK(p.a.p);
    CHECK(p.a.path1 == "remote");
    CHECK(p.a.path2 == "local");

    p = parse_line("# nothing to do");
    CHECK(p.rc == 0);
    CHECK(p.m.blank);
    CHECK(parse_line("").m.blank);

    p = parse_line("ls -lt /tmp");
    CHECK(p.a.id == i_ls);
    CHECK(p.a.ls.long_view);
    CHECK(p.a.ls.sort == ls_flags::by_time);
    CHECK(p.a.path1 == "/tmp");

    p = parse_line("chmod 640 f");
    CHECK(p.rc == 0);
    CHECK(p.a.n == 0640);
    CHECK(p.a.path1 == "f");

    p = parse_line("!ls -l");
    CHECK(p.a.id == i_shell);
    CHECK(p.a.rest == "ls -l");

    p = parse_line("lls -la /etc");
    CHECK(p.a.id == i_lls);
    CHECK(p.a.rest == "-la /etc");
}

TEST_CASE("sftp command line: errors in OpenSSH's words")
{
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"frobnicate", "Invalid command."},
        {"get -x a", "get: Invalid flag -x"},
        {"rename a", "You must specify two paths after a rename command."},
        {"rm", "You must specify a path after a rm command."},
        {"put", "You must specify at least one path after a put command."},
        {"chmod rwx f", "You must supply a numeric argument to the chmod command."},
        {"chown 1000", "You must specify a path after a chown command."},
    };
    // (No structured binding: clang 14 cannot capture one in CAPTURE's lambda.)
    for (const auto& c : cases) {
        const std::string& line = c.first;
        CAPTURE(line);
        auto p = parse_line(line);
        CHECK(p.rc == -1);
        REQUIRE(p.errors.size() == 1);
        CHECK(p.errors[0] == c.second);
    }
    // cd without a path is the home directory, not an error.
    CHECK(parse_line("cd").rc == 0);
}

TEST_CASE("sftp command line: what a batch's first command looks up with INIT")
{
    char dir[] = "/tmp/lh-first-flight-XXXXXX";
    REQUIRE(::mkdtemp(dir) != nullptr);
    const std::string local = std::string(dir) + "/one file";
    {
        std::FILE* f = std::fopen(local.c_str(), "w");
        REQUIRE(f != nullptr);
        std::fputs("data", f);
        std::fclose(f);
    }
    const shell_settings s;
    auto ff = sftp_shell::first_flight("get dir/f local", s);
    CHECK(ff.stat_path == "dir/f");
    CHECK_FALSE(ff.open);
    CHECK(sftp_shell::first_flight("-get /abs/f", s).stat_path == "/abs/f");
    CHECK(sftp_shell::first_flight("reget x", s).stat_path == "x");
    CHECK_FALSE(sftp_shell::first_flight("get *.txt", s).stat_path); // a glob reads directories
    CHECK_FALSE(sftp_shell::first_flight("ls", s).stat_path);
    CHECK_FALSE(sftp_shell::first_flight("# get x", s).stat_path);
    CHECK_FALSE(sftp_shell::first_flight("get \"unterminated", s).stat_path);

    // put of one local file to a named target: its stat and the OPEN
    // do_put sends ahead (write, create, truncate; the times with -p).
    ff = sftp_shell::first_flight("put \"" + local + "\" target", s);
    CHECK(ff.stat_path == "target");
    REQUIRE(ff.open);
    CHECK(ff.open->path == "target");
    CHECK(ff.open->pflags == (sftp::fxf::write | sftp::fxf::creat | sftp::fxf::trunc));
    CHECK_FALSE(ff.open->attributes.has(sftp::attr::acmodtime));
    ff = sftp_shell::first_flight("put -p \"" + local + "\" target", s);
    REQUIRE(ff.open);
    CHECK(ff.open->attributes.has(sftp::attr::acmodtime));
    shell_settings preserve;
    preserve.preserve = true;
    ff = sftp_shell::first_flight("put \"" + local + "\" target", preserve);
    REQUIRE(ff.open);
    CHECK(ff.open->attributes.has(sftp::attr::acmodtime));
    // A resume stats the target first; no target means nothing to stat; no
    // such local file, nothing to open.
    ff = sftp_shell::first_flight("reput \"" + local + "\" target", s);
    CHECK(ff.stat_path == "target");
    CHECK_FALSE(ff.open);
    CHECK_FALSE(sftp_shell::first_flight("put \"" + local + "\"", s).stat_path);
    ff = sftp_shell::first_flight("put " + std::string(dir) + "/missing target", s);
    CHECK(ff.stat_path == "target");
    CHECK_FALSE(ff.open);
    ::unlink(local.c_str());
    ::rmdir(dir);
}
