#include "sshd/moduli_provider.hpp"

#include <fstream>

#include <cerrno>
#include <cstring>

namespace longhaul {

namespace {

std::shared_ptr<moduli_groups> fill(std::shared_ptr<moduli_groups> out, const moduli_list& list,
                                    std::vector<log_message>& log)
{
    for (const auto& e : list.errors)
        log.push_back({syslog_level::error, "moduli:" + std::to_string(e.line) + ": " + std::string(e.reason)});
    return out;
}

} // namespace

std::shared_ptr<const moduli_groups> moduli_groups::from_text(std::string_view text, const std::string& path,
                                                              std::vector<log_message>& log)
{
    auto out = std::make_shared<moduli_groups>();
    out->path_ = path;
    out->readable_ = true;
    auto list = parse_moduli(text);
    out->groups_ = std::move(list.groups);
    return fill(out, list, log);
}

std::shared_ptr<const moduli_groups> moduli_groups::deferred(std::string text, const std::string& path)
{
    auto out = std::make_shared<moduli_groups>();
    out->path_ = path;
    out->readable_ = true;
    out->pending_ = std::move(text);
    return out;
}

const std::vector<moduli_entry>& moduli_groups::groups() const
{
    std::call_once(parsed_, [this] {
        if (pending_.empty())
            return;
        groups_ = parse_moduli(pending_).groups;
        pending_ = std::string();
    });
    return groups_;
}

std::shared_ptr<const moduli_groups> moduli_groups::load(const std::string& path, std::vector<log_message>& log)
{
    auto out = std::make_shared<moduli_groups>();
    out->path_ = path;
    errno = 0;
    {
        // Probe first for OpenSSH's message with the errno text.
        std::ifstream probe(path);
        if (!probe) {
            const int e = errno != 0 ? errno : ENOENT;
            log.push_back({syslog_level::info,
                           "WARNING: could not open " + path + " (" + std::strerror(e) + "), using fixed modulus"});
            return out;
        }
    }
    auto list = load_moduli_file(path);
    if (!list) {
        log.push_back({syslog_level::info, "WARNING: could not open " + path + " (" +
                                               std::string(list.error() == errc::too_large ? "File too large"
                                                                                           : "Input/output error") +
                                               "), using fixed modulus"});
        return out;
    }
    out->readable_ = true;
    out->groups_ = std::move(list->groups);
    return fill(out, *list, log);
}

gex_choice moduli_groups::choose(std::uint32_t min_bits, std::uint32_t preferred_bits, std::uint32_t max_bits,
                                 random_source& rng, std::vector<log_message>* log) const
{
    gex_choice c = choose_gex_group(groups(), min_bits, preferred_bits, max_bits, rng);
    if (c.fallback && readable_ && log != nullptr)
        log->push_back({syslog_level::info, "WARNING: no suitable primes in " + path_});
    return c;
}

gex_group_provider make_gex_group_provider(std::shared_ptr<const moduli_groups> groups, random_source& rng,
                                           std::function<void(const log_message&)> log)
{
    return [groups = std::move(groups), &rng, log = std::move(log)](std::uint32_t min, std::uint32_t preferred,
                                                                     std::uint32_t max) -> std::optional<dh_group> {
        std::vector<log_message> messages;
        gex_choice c = groups ? groups->choose(min, preferred, max, rng, &messages)
                              : choose_gex_group({}, min, preferred, max, rng);
        if (log)
            for (const auto& m : messages)
                log(m);
        return c.group;
    };
}

} // namespace longhaul
