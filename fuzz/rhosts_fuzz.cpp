// Fuzzes the hosts.equiv / shosts.equiv / .rhosts / .shosts reader that
// hostbased authentication uses (sshd/hostbased_auth's rhosts_text_allows,
// OpenSSH's check_rhosts_file): the input is a file, judged for a fixed
// client and, so that matches are reached, for the first line's own words
// as host and user. Nothing may crash, and a file must never allow a client
// it does not name: an answer of "allowed" needs the host's name (in any
// case), its address or a netgroup somewhere in the file.
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

// Whether an allowing file could name the host: its name in any case, its
// address, or a netgroup.
bool could_name(std::string_view text, std::string_view host, std::string_view addr)
{
    std::string lower(text), name(host);
    for (auto* s : {&lower, &name})
        for (auto& c : *s)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower.find(name) != std::string::npos || text.find(addr) != std::string_view::npos ||
           text.find('@') != std::string_view::npos;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> notes;
    if (longhaul::rhosts_text_allows(text, "client.example", "192.0.2.7", "alice", "alice", "/etc/hosts.equiv", &notes))
        check(could_name(text, "client.example", "192.0.2.7"));
    const auto [host, user] = first_words(text);
    if (!host.empty()) {
        const bool ok = longhaul::rhosts_text_allows(text, host, "192.0.2.7", user.empty() ? "srv" : user, "srv",
                                                     "/etc/ssh/shosts.equiv", &notes);
        (void)ok;
    }
    if (longhaul::rhosts_text_allows(text, "nohost.invalid", "198.51.100.9", "nobody", "nobody", "/x", nullptr))
        check(could_name(text, "nohost.invalid", "198.51.100.9"));
    return 0;
}
