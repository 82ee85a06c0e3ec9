// Fuzzes the moduli(5) parser and the group-exchange choice over what it
// accepts. Seed with tests/data/moduli_sample.
#include "common/crypto/moduli.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

// Deterministic so that a crash reproduces from its input alone.
class fixed_random final : public longhaul::random_source {
public:
    void fill(longhaul::mutable_byte_span out) override
    {
        for (auto& b : out)
            b = static_cast<std::uint8_t>(state_ = state_ * 1103515245u + 12345u);
    }

private:
    std::uint32_t state_ = 1;
};

void check(bool ok)
{
    if (!ok)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace longhaul;
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    const moduli_list list = parse_moduli(text);
    for (const auto& e : list.groups) {
        // Whatever the parser accepts must pass the client's own checks.
        check(dh_group_bits(e.group) == e.bits);
        check(e.bits <= moduli_max_bits);
        check(validate_gex_group(e.group, e.bits, e.bits).has_value());
    }
    for (const auto& err : list.errors)
        check(err.line >= 1 && !err.reason.empty());

    // One line on its own agrees with the file parser.
    const std::string_view first = text.substr(0, text.find('\n'));
    std::string_view reason;
    const auto line = parse_moduli_line(first, &reason);
    check(line.has_value() || !reason.empty());

    if (!list.groups.empty()) {
        fixed_random rng;
        const std::uint32_t preferred = list.groups.front().bits;
        const gex_choice c = choose_gex_group(list.groups, 0, preferred, UINT32_MAX, rng);
        check(!c.fallback && dh_group_bits(c.group) == preferred);
    }
    return 0;
}
