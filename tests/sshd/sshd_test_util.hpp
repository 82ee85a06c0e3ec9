// Helpers for the sshd tests: temporary directories, files and running
// OpenSSH's tools for comparison.
#pragma once

#include "common/keys/key_lines.hpp"
#include "tests/file_text.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace longhaul::test {

class temp_dir {
public:
    temp_dir()
    {
        char tmpl[] = "/tmp/longhaul-sshd-test-XXXXXX";
        const char* p = ::mkdtemp(tmpl);
        path_ = p ? p : "";
    }
    ~temp_dir()
    {
        std::error_code ec;
        // Undo test-made permissions that would stop the removal.
        for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
             it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
            ::chmod(it->path().c_str(), 0700);
        std::filesystem::remove_all(path_, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

inline void write_file(const std::string& path, const std::string& text, mode_t mode = 0644)
{
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << text;
    }
    ::chmod(path.c_str(), mode);
}

inline std::string read_file(const std::string& path)
{
    return read_whole_file(path);
}

// A .pub fixture of tests/data/keys: its first line, and its key.
inline std::string fixture_key_line(const std::string& name)
{
    const std::string text = read_whole_file(std::string(LONGHAUL_TEST_DATA) + "/keys/" + name);
    return text.substr(0, text.find('\n'));
}

inline public_key fixture_key(const std::string& name)
{
    auto line = parse_public_key_line(fixture_key_line(name));
    REQUIRE(line.has_value());
    return line->key;
}

struct command_result {
    int status = -1; // exit status, or -1
    std::string output;
};

// Runs `cmd` with sh -c, capturing stdout (append 2>&1 for stderr).
inline command_result run_command(const std::string& cmd)
{
    command_result r;
    FILE* f = ::popen(cmd.c_str(), "r");
    if (f == nullptr)
        return r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        r.output.append(buf, n);
    const int st = ::pclose(f);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

inline bool have_program(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

inline std::string strip_cr(std::string s)
{
    std::string out;
    for (char c : s)
        if (c != '\r')
            out.push_back(c);
    return out;
}

} // namespace longhaul::test
