#include "ssh/sftp_client/program_args.hpp"

#include "common/text_parse.hpp"

#include <algorithm>
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

std::string bounded_number_error(const std::string& s, std::uint64_t lo, std::uint64_t hi)
{
    bool ok = false;
    parse_bounded_number(s, lo, hi, ok);
    if (ok)
        return {};
    // As strtonum: a number with a sign or out of range is too small or too
    // large; anything else is invalid.
    const std::string digits = !s.empty() && (s[0] == '-' || s[0] == '+') ? s.substr(1) : s;
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
        return "invalid";
    if (s[0] == '-')
        return "too small"; // (parse_bounded_number takes no sign, so not even -0)
    errno = 0;
    const unsigned long long v = std::strtoull(digits.c_str(), nullptr, 10);
    return errno == ERANGE || v > hi ? "too large" : "too small";
}

std::optional<std::uint32_t> parse_sftp_size_option(const std::string& s, std::uint32_t cap)
{
    // (No errno check: OpenSSH takes an overflow's LONG_MAX as it is.)
    char* end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (v == 0 || *end != '\0')
        return std::nullopt;
    // OpenSSH stores it in a size_t: a negative number is a huge one.
    return v < 0 || static_cast<unsigned long>(v) > cap ? cap : std::uint32_t(v);
}

std::string apply_sftp_x_option(const std::string& arg, std::uint32_t& buffer_size, std::uint32_t& num_requests)
{
    if (arg.rfind("buffer=", 0) == 0) {
        const std::string value = arg.substr(7);
        // As OpenSSH: scan_scaled ("64K" is 65536), its errno's text when
        // that fails, EINVAL's when the size is out of (0, 256 KiB] (its
        // bound, which is ours: max_buffer_size).
        const char* why = nullptr;
        const auto v = scan_scaled(value, why);
        if (!v)
            return "Invalid buffer size \"" + value + "\": " + why;
        if (*v <= 0 || *v > max_buffer_size)
            return "Invalid buffer size \"" + value + "\": Invalid argument";
        buffer_size = std::uint32_t(*v);
        return {};
    }
    if (arg.rfind("nrequests=", 0) == 0) {
        const std::string value = arg.substr(10);
        bool ok = false;
        const auto v = parse_bounded_number(value, 1, openssh_max_requests, ok);
        if (!ok)
            return "Invalid number of requests \"" + value + "\": " +
                   bounded_number_error(value, 1, openssh_max_requests);
        num_requests = std::uint32_t(std::min<std::uint64_t>(v, max_requests_in_flight));
        return {};
    }
    return "Invalid -X option";
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
