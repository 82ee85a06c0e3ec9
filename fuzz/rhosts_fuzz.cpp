// Fuzzes the hosts.equiv / shosts.equiv / .rhosts / .shosts reader that
// hostbased authentication uses (sshd/hostbased_auth's rhosts_text_allows,
// OpenSSH's check_rhosts_file): the input is a file, judged for a fixed
// client and, so that matches are reached, for the first line's own words
// as host and user. Nothing may crash, and a file must never allow a client
// no line names: an answer of "allowed" needs a line holding the host (or
// the address) and, unless the line names the host alone, the user.
#include "sshd/hostbased_auth.hpp"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

void check(bool ok)
{
    if (!ok)
        abort();
}

// The first line's first two words (as the reader splits them).
std::pair<std::string, std::string> first_words(std::string_view text)
{
    text = text.substr(0, text.find('\n'));
    auto word = [&text]() {
        const auto b = text.find_first_not_of(" \t\r\v\f");
        if (b == std::string_view::npos) {
            text = {};
            return std::string();
        }
        text.remove_prefix(b);
        const auto e = text.find_first_of(" \t\r\v\f");
        std::string w(text.substr(0, e));
        text = e == std::string_view::npos ? std::string_view{} : text.substr(e);
        while (!w.empty() && (w[0] == '+' || w[0] == '-'))
            w.erase(0, 1);
        return w;
    };
    std::string host = word();
    std::string user = word();
    return {host, user};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> notes;
    if (longhaul::rhosts_text_allows(text, "client.example", "192.0.2.7", "alice", "alice", "/etc/hosts.equiv", &notes)) {
        // The host's name in any case, its address, or a netgroup.
        std::string lower(text);
        for (auto& c : lower)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        check(lower.find("client.example") != std::string::npos || lower.find("192.0.2.7") != std::string::npos ||
              lower.find('@') != std::string::npos);
    }
    const auto [host, user] = first_words(text);
    if (!host.empty()) {
        const bool ok = longhaul::rhosts_text_allows(text, host, "192.0.2.7", user.empty() ? "srv" : user, "srv",
                                                     "/etc/ssh/shosts.equiv", &notes);
        (void)ok;
    }
    // No file allows a client whose names appear nowhere in it.
    check(!longhaul::rhosts_text_allows(text, "\x01no-such-host", "\x01no-such-address", "\x01nobody", "\x01nobody",
                                        "/x", nullptr));
    return 0;
}
