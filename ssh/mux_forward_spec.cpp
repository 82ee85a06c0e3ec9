#include "ssh/mux_forward_spec.hpp"

#include "common/text.hpp"

namespace longhaul {

namespace {

constexpr std::uint32_t max_port = 65535;

std::uint32_t wire_port(int port)
{
    return port == port_streamlocal ? mux::port_streamlocal : static_cast<std::uint32_t>(port);
}

// An unset bind address goes as "", an empty one ("-L :8080:...") as "*".
std::string wire_listen_host(const forward_spec& f)
{
    if (f.listen_path)
        return *f.listen_path;
    if (!f.listen_host)
        return {};
    return f.listen_host->empty() ? std::string(1, '*') : *f.listen_host;
}

// One end of a forward from the wire: a socket path (PORT_STREAMLOCAL), or
// a host ("" is none) and port.
void read_end(const std::string& host, std::uint32_t port, std::optional<std::string>& host_out,
              std::optional<std::string>& path_out, int& port_out)
{
    if (port == mux::port_streamlocal) {
        path_out = host;
        port_out = port_streamlocal;
        return;
    }
    if (!host.empty())
        host_out = host;
    port_out = static_cast<int>(port);
}

} // namespace

mux::fwd_kind mux_forward_kind(const forward_spec& f, bool remote)
{
    if (remote)
        return mux::fwd_kind::remote;
    return f.is_dynamic() ? mux::fwd_kind::dynamic : mux::fwd_kind::local;
}

mux::forward_request mux_forward_request(mux::msg type, mux::fwd_kind kind, const forward_spec& f)
{
    mux::forward_request r;
    r.type = type;
    r.kind = static_cast<std::uint32_t>(kind);
    r.listen_host = wire_listen_host(f);
    r.listen_port = f.listen_path ? mux::port_streamlocal : wire_port(f.listen_port);
    r.connect_host = f.connect_path ? *f.connect_path : f.connect_host.value_or("");
    r.connect_port = f.connect_path ? mux::port_streamlocal : wire_port(f.connect_port);
    return r;
}

std::optional<forward_spec> forward_of_mux_request(const mux::forward_request& r, std::string& why)
{
    const auto kind = static_cast<mux::fwd_kind>(r.kind);
    if (kind != mux::fwd_kind::local && kind != mux::fwd_kind::remote && kind != mux::fwd_kind::dynamic) {
        why = "invalid forwarding type " + std::to_string(r.kind);
        return std::nullopt;
    }
    const bool listen_path = r.listen_port == mux::port_streamlocal;
    const bool connect_path = r.connect_port == mux::port_streamlocal;
    if (kind == mux::fwd_kind::dynamic && listen_path) {
        why = "streamlocal and dynamic forwards are mutually exclusive";
        return std::nullopt;
    }
    if (!listen_path && r.listen_port > max_port) {
        why = "invalid listen port " + std::to_string(r.listen_port);
        return std::nullopt;
    }
    if ((!connect_path && r.connect_port > max_port) ||
        (kind == mux::fwd_kind::local && r.connect_port == 0)) {
        why = "invalid connect port " + std::to_string(r.connect_port);
        return std::nullopt;
    }
    if (kind != mux::fwd_kind::dynamic && r.connect_host.empty()) {
        why = "missing connect host";
        return std::nullopt;
    }
    forward_spec f;
    read_end(r.listen_host, r.listen_port, f.listen_host, f.listen_path, f.listen_port);
    read_end(r.connect_host, r.connect_port, f.connect_host, f.connect_path, f.connect_port);
    // ssh's own -D names its target "socks", whatever the client sent.
    if (kind == mux::fwd_kind::dynamic)
        f.connect_host = "socks";
    return f;
}

std::string describe_mux_forward(mux::fwd_kind kind, const forward_spec& f, bool gateway_ports)
{
    const std::string default_bind = gateway_ports ? "*" : "LOCALHOST";
    const std::string listen =
        printable(f.listen_path ? *f.listen_path : f.listen_host.value_or(default_bind)).substr(0, 200) + ":" +
        std::to_string(f.listen_port);
    const std::string target =
        printable(f.connect_path ? *f.connect_path : f.connect_host.value_or("")).substr(0, 200) + ":" +
        std::to_string(f.connect_port);
    switch (kind) {
    case mux::fwd_kind::local: return "local forward " + listen + " -> " + target;
    case mux::fwd_kind::dynamic: return "dynamic forward " + listen + " -> *";
    case mux::fwd_kind::remote:
        return "remote forward " +
               printable(f.listen_path ? *f.listen_path : f.listen_host.value_or("LOCALHOST")).substr(0, 200) + ":" +
               std::to_string(f.listen_port) + " -> " + target;
    }
    return "unknown forward";
}

} // namespace longhaul
