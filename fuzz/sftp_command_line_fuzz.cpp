// Fuzzes the sftp command line (ssh/sftp/sftp_command_line): what a batch
// file (sftp -b) or a user types, split into words and parsed into a
// command with its flags and paths.
//
// Input: one line (any bytes).
// Invariants: a refused line gets exactly one message and an accepted one
// none; an accepted command is one of the table's (or the shell escape),
// and a blank line carries none; each word split_words() returns, escaped
// by escape_glob(), is a pattern that matches that word (completion relies
// on it).
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "fuzz/fuzz_seeds.hpp"
#include "ssh/sftp/sftp_command_line.hpp"

#include <fnmatch.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace longhaul;
using namespace longhaul::sftp_cli;

namespace {

void check(bool ok)
{
    if (!ok)
        std::abort();
}

bool known_id(int id)
{
    for (const auto& c : command_table())
        if (c.id == id)
            return true;
    return false;
}

void write_seeds(const std::string& dir)
{
    const std::vector<std::string> lines = {
        "get -afpR remote/path local",
        "put 'a file with spaces' \"and \\\"quotes\\\"\"",
        "-@ls -1Safhlnrt /tmp/*.txt",
        "chmod 0755 dir",
        "chown 1000 file",
        "lumask 022",
        "!ls -l | wc",
        "lls -la ~",
        "rename -l old new",
        "ln -s target link",
        "df -hi .",
        "# a comment",
        "get 'unterminated",
        "mget \\*.log x\\ y",
    };
    int n = 0;
    for (const auto& l : lines)
        fuzz::write_seed(dir, "seed-" + std::to_string(n++), byte_span(reinterpret_cast<const std::uint8_t*>(l.data()), l.size()));
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    fuzz::maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string line(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> errors;
    sftp::output_sink out;
    out.error = [&](const std::string& e) { errors.push_back(e); };
    command_args a;
    line_marks m;
    const int rc = parse_command_line(line, a, m, out);
    check(rc == 0 || rc == -1);
    check(rc == 0 ? errors.empty() : errors.size() == 1);
    if (rc == 0 && !m.blank)
        check(a.id == i_shell || known_id(a.id));
    if (m.blank)
        check(a.id == 0);

    std::string error;
    if (auto w = split_words(line, error))
        for (const auto& word : *w)
            check(::fnmatch(escape_glob(word).c_str(), word.c_str(), 0) == 0);
    return 0;
}
