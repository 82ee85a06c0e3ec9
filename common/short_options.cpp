#include "common/short_options.hpp"

namespace longhaul {

namespace {

enum class letter { unknown, flag, with_argument };

letter classify(std::string_view optstring, char c) noexcept
{
    const auto pos = c == ':' ? optstring.npos : optstring.find(c);
    if (pos == optstring.npos)
        return letter::unknown;
    return pos + 1 < optstring.size() && optstring[pos + 1] == ':' ? letter::with_argument : letter::flag;
}

} // namespace

short_option_scan scan_short_options(const std::vector<std::string>& words, std::size_t first,
                                     std::string_view optstring, const short_option_handler& on)
{
    short_option_scan scan;
    std::size_t i = first;
    for (; i < words.size(); ++i) {
        const std::string& word = words[i];
        if (word == "--") {
            ++i;
            break;
        }
        if (word.size() < 2 || word[0] != '-')
            break;
        for (std::size_t k = 1; k < word.size(); ++k) {
            const char c = word[k];
            const letter kind = classify(optstring, c);
            if (kind == letter::with_argument) {
                std::string argument;
                if (k + 1 < word.size()) {
                    argument = word.substr(k + 1);
                } else if (i + 1 < words.size()) {
                    argument = words[++i];
                } else {
                    scan.error = std::string("option requires an argument -- ") + c;
                    scan.next = i;
                    return scan;
                }
                if (!on(c, argument)) {
                    scan.stopped = true;
                    scan.next = i + 1;
                    return scan;
                }
                break; // the argument was the rest of this word
            }
            if (kind == letter::unknown) {
                scan.error = std::string("unknown option -- ") + c;
                scan.next = i;
                return scan;
            }
            if (!on(c, {})) {
                scan.stopped = true;
                scan.next = i + 1;
                return scan;
            }
        }
    }
    scan.next = i;
    return scan;
}

} // namespace longhaul
