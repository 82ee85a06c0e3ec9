#include "ssh/sftp_client/program_args.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace longhaul::sftp {

int parse_short_options(int argc, char** argv, const char* with_argument, const char* flags,
                        const std::function<void(char option, const std::string& argument)>& on, std::string& error)
{
    return parse_short_options(std::vector<std::string>(argv, argv + argc), with_argument, flags, on, error);
}

int parse_short_options(const std::vector<std::string>& words, const char* with_argument, const char* flags,
                        const std::function<void(char option, const std::string& argument)>& on, std::string& error)
{
    const int argc = int(words.size());
    int i = 1;
    for (; i < argc; ++i) {
        const std::string& a = words[std::size_t(i)];
        if (a == "--") {
            ++i;
            break;
        }
        if (a.size() < 2 || a[0] != '-')
            break;
        for (std::size_t k = 1; k < a.size(); ++k) {
            const char c = a[k];
            if (std::strchr(with_argument, c) != nullptr) {
                std::string arg;
                if (k + 1 < a.size())
                    arg = a.substr(k + 1);
                else if (i + 1 < argc)
                    arg = words[std::size_t(++i)];
                else {
                    error = std::string("option requires an argument -- ") + c;
                    return -1;
                }
                on(c, arg);
                break; // the rest of the word was the argument
            }
            if (c == ':' || std::strchr(flags, c) == nullptr) {
                error = std::string("unknown option -- ") + c;
                return -1;
            }
            on(c, {});
        }
    }
    return i;
}

std::uint64_t parse_bounded_number(const std::string& s, std::uint64_t lo, std::uint64_t hi, bool& ok)
{
    ok = false;
    // strtoull would take "-1" as a huge number.
    if (s.empty() || s[0] == '-')
        return 0;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return 0;
    ok = true;
    return v;
}

bool ssh_passthrough_option(char option, const std::string& argument, std::vector<std::string>& ssh_args)
{
    switch (option) {
    case '4':
    case '6':
    case 'C':
        ssh_args.push_back(std::string("-") + option);
        return true;
    case 'c':
    case 'F':
    case 'i':
    case 'o':
        ssh_args.push_back(std::string("-") + option);
        ssh_args.push_back(argument);
        return true;
    case 'J':
        ssh_args.push_back("-oProxyJump=" + argument);
        return true;
    default:
        return false;
    }
}

} // namespace longhaul::sftp
