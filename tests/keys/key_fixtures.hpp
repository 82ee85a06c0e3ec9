// Helpers for the key fixtures in tests/data/keys (made by ssh-keygen, see
// the README there).
#pragma once

#include "common/keys/key_lines.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::test {

inline constexpr std::string_view fixture_passphrase = "longhaul-test";

inline std::filesystem::path key_dir() { return std::filesystem::path(LONGHAUL_TEST_DATA) / "keys"; }

inline std::string read_text(const std::filesystem::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline std::string fixture(std::string_view name) { return read_text(key_dir() / std::string(name)); }

// Every private key file ("*_key"), sorted.
inline std::vector<std::string> key_fixture_names()
{
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(key_dir())) {
        const auto name = e.path().filename().string();
        if (name.size() > 4 && name.ends_with("_key"))
            out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
}

inline bool fixture_encrypted(std::string_view name) { return name.find("_plain_") == std::string_view::npos; }
inline bool fixture_is_pem(std::string_view name)
{
    return name.find("_pem_") != std::string_view::npos || name.find("_pkcs8_") != std::string_view::npos;
}

inline std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// The key on a fixture's first line (a .pub file); throws if it does not parse.
inline public_key fixture_public_key(std::string_view name)
{
    auto line = parse_public_key_line(first_line(fixture(name)));
    if (!line)
        throw std::runtime_error("fixture " + std::string(name) + ": not a public key line");
    return line->key;
}

} // namespace longhaul::test
