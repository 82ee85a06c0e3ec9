#include "ssh/agent/agent_constraints.hpp"

#include "common/auth/agent_protocol.hpp"
#include "common/text.hpp"
#include "common/wire.hpp"

#include <string_view>

namespace longhaul::agent {

namespace {

// Constraint extensions OpenSSH knows, which this agent cannot enforce yet.
constexpr std::string_view unsupported_extensions[] = {
    "associated-certs-v00@openssh.com",
};

} // namespace

result<add_constraints> parse_key_constraints(wire_reader& r, std::string& error)
{
    add_constraints c;
    while (r.ok() && r.remaining() > 0) {
        const std::uint8_t type = r.u8();
        switch (type) {
        case constrain_lifetime: {
            const std::uint32_t seconds = r.u32();
            if (c.lifetime) {
                error = "lifetime already set";
                return errc::malformed;
            }
            c.lifetime = seconds;
            break;
        }
        case constrain_confirm:
            if (c.confirm) {
                error = "confirm already set";
                return errc::malformed;
            }
            c.confirm = true;
            break;
        case constrain_maxsign:
            error = "maxsign constraint not supported yet (XMSS keys are not supported)";
            return errc::unsupported;
        case constrain_extension: {
            const std::string_view name = r.text(1024);
            if (!r.ok())
                break;
            if (name == restrict_destination_extension) {
                if (c.has_destinations) {
                    error = std::string(name) + " already set";
                    return errc::malformed;
                }
                auto d = parse_dest_constraints(r, error);
                if (!d)
                    return d.error();
                c.destinations = std::move(*d);
                c.has_destinations = true;
                break;
            }
            if (name == sk_provider_extension) {
                const std::string_view provider = r.text(max_provider_path);
                if (!r.ok())
                    break;
                if (provider.find('\0') != std::string_view::npos) {
                    error = std::string(name) + ": bad provider";
                    return errc::malformed;
                }
                if (c.sk_provider) {
                    error = std::string(name) + " already set";
                    return errc::malformed;
                }
                c.sk_provider = std::string(provider);
                break;
            }
            for (auto known : unsupported_extensions)
                if (name == known) {
                    error = "constraint extension " + std::string(name) + " not supported yet";
                    return errc::unsupported;
                }
            error = "unsupported constraint \"" + printable(name) + "\"";
            return errc::unsupported;
        }
        default:
            error = "Unknown constraint " + std::to_string(type);
            return errc::unsupported;
        }
    }
    if (!r.ok()) {
        error = "parse constraints";
        return errc::malformed;
    }
    return c;
}

} // namespace longhaul::agent
