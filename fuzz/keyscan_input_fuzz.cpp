// Fuzzes ssh-keyscan's inputs: the lines of a -f file (comment cut,
// "addrlist namelist" split, CIDR ranges expanded) and, when the first
// byte is 'A', a command line (NUL-separated arguments). Nothing may
// crash, hang or read out of bounds; every address a range yields parses
// as an address again, and a range never yields more than it spans.
//
// Seeds: fuzz/corpus/keyscan_input_fuzz (hand-written -f files and
// command lines).
#include "ssh/keyscan/keyscan_options.hpp"

#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

using namespace longhaul;

namespace {

// A /8 or a /104 is millions of addresses: look at the first few only.
constexpr int max_addresses = 512;

void check_address(const std::string& a)
{
    unsigned char buf[16];
    if (inet_pton(AF_INET, a.c_str(), buf) != 1 && inet_pton(AF_INET6, a.c_str(), buf) != 1)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    if (!input.empty() && input[0] == 'A') {
        std::vector<std::string> args;
        std::string_view rest = input.substr(1);
        while (!rest.empty() && args.size() < 64) {
            const auto nul = rest.find('\0');
            args.emplace_back(rest.substr(0, nul));
            rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
        }
        const auto r = parse_keyscan_args(args);
        (void)r;
        return 0;
    }
    std::string_view rest = input;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        const auto cleaned = clean_keyscan_line(line);
        if (!cleaned)
            continue;
        if (auto range = cidr_range::parse(*cleaned)) {
            for (int i = 0; i < max_addresses; ++i) {
                auto a = range->next();
                if (!a)
                    break;
                check_address(*a);
            }
            continue;
        }
        if (auto target = split_keyscan_entry(*cleaned)) {
            if (target->connect_names.empty() && target->output_names.empty())
                std::abort();
        }
    }
    return 0;
}
