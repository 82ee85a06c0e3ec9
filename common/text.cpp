#include "common/text.hpp"

namespace longhaul {

std::string printable(std::string_view s, bool keep_newlines)
{
    std::string out;
    out.reserve(s.size());
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c >= 0x20 && c < 0x7f) || c == '\t' || (keep_newlines && (c == '\n' || c == '\r'))) {
            out.push_back(ch);
        } else {
            out.push_back('\\');
            out.push_back(static_cast<char>('0' + (c >> 6)));
            out.push_back(static_cast<char>('0' + ((c >> 3) & 7)));
            out.push_back(static_cast<char>('0' + (c & 7)));
        }
    }
    return out;
}

} // namespace longhaul
