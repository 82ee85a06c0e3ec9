#include "common/sftp/sftp_attrs.hpp"

#include <limits>

namespace longhaul::sftp {

void attrs::encode(wire_writer& w) const
{
    w.u32(flags);
    if (has(attr::size))
        w.u64(size);
    if (has(attr::uidgid))
        w.u32(uid).u32(gid);
    if (has(attr::permissions))
        w.u32(permissions);
    if (has(attr::acmodtime))
        w.u32(atime).u32(mtime);
    if (has(attr::extended)) {
        w.u32(static_cast<std::uint32_t>(extended.size()));
        for (const auto& [type, data] : extended)
            w.string(type).string(data);
    }
}

attrs attrs::decode(wire_reader& r)
{
    // The enclosing packet bounds every string; the reader's default cap
    // (256 KiB) must not be what limits them.
    constexpr std::size_t unbounded = std::numeric_limits<std::size_t>::max();
    attrs a;
    a.flags = r.u32();
    if (!r.ok())
        return a;
    if ((a.flags & ~attr::known) != 0) {
        r.fail(errc::malformed);
        return a;
    }
    if (a.has(attr::size))
        a.size = r.u64();
    if (a.has(attr::uidgid)) {
        a.uid = r.u32();
        a.gid = r.u32();
    }
    if (a.has(attr::permissions))
        a.permissions = r.u32();
    if (a.has(attr::acmodtime)) {
        a.atime = r.u32();
        a.mtime = r.u32();
    }
    if (a.has(attr::extended)) {
        const std::uint32_t count = r.u32();
        if (r.ok() && count > max_extended_attrs) {
            r.fail(errc::too_large);
            return a;
        }
        for (std::uint32_t i = 0; i < count && r.ok(); ++i) {
            auto type = r.text(unbounded);
            auto data = r.text(unbounded);
            if (r.ok())
                a.extended.emplace_back(std::string(type), std::string(data));
        }
    }
    return a;
}

attrs attrs::from_stat(const struct stat& st)
{
    attrs a;
    a.flags = attr::size | attr::uidgid | attr::permissions | attr::acmodtime;
    a.size = static_cast<std::uint64_t>(st.st_size);
    a.uid = st.st_uid;
    a.gid = st.st_gid;
    a.permissions = st.st_mode;
    // Version 3 carries 32-bit times, as OpenSSH truncates them.
    a.atime = static_cast<std::uint32_t>(st.st_atime);
    a.mtime = static_cast<std::uint32_t>(st.st_mtime);
    return a;
}

} // namespace longhaul::sftp
