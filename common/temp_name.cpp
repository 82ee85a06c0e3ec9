#include "common/temp_name.hpp"

#include <string_view>

namespace longhaul {

namespace {

constexpr std::string_view name_chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

} // namespace

std::string fill_temp_template(std::string tmpl, random_source& rng, std::size_t keep)
{
    std::size_t start = tmpl.size();
    while (start > 0 && tmpl[start - 1] == 'X')
        --start;
    if (tmpl.size() - start <= keep)
        return tmpl;
    const std::size_t end = tmpl.size() - keep;
    std::size_t i = start;
    while (i < end) {
        std::uint8_t b[32];
        rng.fill(b);
        for (std::uint8_t v : b) {
            // 248 = 4 * 62: the bytes above it would favour the first letters.
            if (v < 248 && i < end)
                tmpl[i++] = name_chars[v % name_chars.size()];
        }
    }
    return tmpl;
}

std::string fill_temp_template(std::string tmpl, std::size_t keep)
{
    system_random rng;
    return fill_temp_template(std::move(tmpl), rng, keep);
}

} // namespace longhaul
