#include "common/transport/version.hpp"

#include <algorithm>

namespace longhaul {

result<std::optional<std::string>> take_identification_line(byte_buffer& in)
{
    auto data = in.data();
    auto scan = data.first(std::min(data.size(), max_identification_line));
    auto lf = std::find(scan.begin(), scan.end(), std::uint8_t('\n'));
    if (lf == scan.end()) {
        if (data.size() >= max_identification_line)
            return errc::too_large;
        return std::optional<std::string>{};
    }
    std::size_t len = static_cast<std::size_t>(lf - scan.begin());
    std::size_t text_len = len;
    if (text_len > 0 && scan[text_len - 1] == '\r')
        --text_len;
    for (std::size_t i = 0; i < text_len; ++i)
        if (scan[i] == 0 || scan[i] == '\r')
            return errc::malformed;
    std::string line(reinterpret_cast<const char*>(scan.data()), text_len);
    in.consume(len + 1);
    return std::optional<std::string>(std::move(line));
}

result<identification> parse_identification(std::string_view line)
{
    if (!line.starts_with("SSH-"))
        return errc::bad_version;
    auto rest = line.substr(4);
    auto dash = rest.find('-');
    if (dash == std::string_view::npos)
        return errc::bad_version;
    identification id;
    id.line = std::string(line);
    id.proto = std::string(rest.substr(0, dash));
    if (id.proto != "2.0" && id.proto != "1.99")
        return errc::bad_version;
    rest.remove_prefix(dash + 1);
    auto space = rest.find(' ');
    id.software = std::string(rest.substr(0, space));
    if (space != std::string_view::npos)
        id.comments = std::string(rest.substr(space + 1));
    if (id.software.empty())
        return errc::bad_version;
    for (char c : id.software)
        if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
            return errc::bad_version;
    return id;
}

std::string make_identification(std::string_view software, std::string_view comments)
{
    std::string s = "SSH-2.0-";
    s.append(software);
    if (!comments.empty()) {
        s.push_back(' ');
        s.append(comments);
    }
    return s;
}

} // namespace longhaul
