#include "ssh/sftp_client/program_args.hpp"

#include <cerrno>
#include <cstdlib>

namespace longhaul::sftp {

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
