// Helpers for the ssh client tests: a scratch directory standing in for
// the user's home, files written into it, and fixture keys.
#pragma once

#include "common/keys/key_lines.hpp"
#include "ssh/ssh_config.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace longhaul::test {

// A fresh directory under $TMPDIR (or /tmp), removed at the end of the test.
class scratch_dir {
public:
    scratch_dir()
    {
        const char* tmp = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmp != nullptr ? tmp : "/tmp") + "/longhaul-ssh-XXXXXX";
        if (mkdtemp(tmpl.data()) == nullptr)
            throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~scratch_dir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;

    const std::string& path() const { return path_; }
    std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

    // Writes `text` to `rel` (parent directories created), returns the full path.
    std::string write(const std::string& rel, const std::string& text) const
    {
        const std::string full = *this / rel;
        std::filesystem::create_directories(std::filesystem::path(full).parent_path());
        std::ofstream out(full, std::ios::binary | std::ios::trunc);
        out << text;
        return full;
    }

private:
    std::string path_;
};

inline std::string read_text_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A config environment whose home is `home` (user "alice", system config
// `system_config`), reading no real files outside it.
inline config_environment test_environment(const std::string& home, const std::string& system_config = "/nonexistent")
{
    auto env = config_environment::for_home(home, "alice", system_config);
    env.local_hostname = "client.example.org";
    env.uid = "1000";
    env.getenv = [](const std::string& name) -> std::optional<std::string> {
        if (name == "TESTVAR")
            return std::string("value");
        if (name == "SHELL")
            return std::string("/bin/sh");
        return std::nullopt;
    };
    env.homes = [home](const std::string& user) -> std::optional<std::string> {
        if (user == "alice")
            return home;
        if (user == "bob")
            return std::string("/home/bob");
        return std::nullopt;
    };
    return env;
}

// Collects log messages.
struct log_capture {
    std::vector<std::pair<log_level, std::string>> messages;
    log_sink sink()
    {
        return [this](log_level l, std::string_view m) { messages.emplace_back(l, std::string(m)); };
    }
    // Messages at `level` or more important, joined by '\n'.
    std::string text(log_level level = log_level::info) const
    {
        std::string out;
        for (const auto& [l, m] : messages) {
            if (l > level)
                continue;
            if (!out.empty())
                out.push_back('\n');
            out += m;
        }
        return out;
    }
};

inline public_key fixture_key(const std::string& name)
{
    auto line = load_public_key_file(std::string(LONGHAUL_TEST_DATA) + "/keys/" + name);
    REQUIRE(line);
    return line->key;
}

} // namespace longhaul::test
