#include "channel/messages.hpp"

#include "common/wire.hpp"

namespace longhaul {

namespace {

template <class T>
result<T> finish(wire_reader& r, T value)
{
    if (auto f = r.finish(); !f)
        return f.error() == errc::incomplete ? errc::malformed : f.error();
    return value;
}

} // namespace

bytes pty_request::encode() const
{
    bytes out;
    wire_writer(out).string(term).u32(cols).u32(rows).u32(width_px).u32(height_px).string(modes);
    return out;
}

result<pty_request> pty_request::decode(byte_span data)
{
    wire_reader r(data);
    pty_request p;
    p.term = std::string(r.text(1024));
    p.cols = r.u32();
    p.rows = r.u32();
    p.width_px = r.u32();
    p.height_px = r.u32();
    p.modes = to_bytes(r.string(64 * 1024));
    return finish(r, std::move(p));
}

bytes window_change_request::encode() const
{
    bytes out;
    wire_writer(out).u32(cols).u32(rows).u32(width_px).u32(height_px);
    return out;
}

result<window_change_request> window_change_request::decode(byte_span data)
{
    wire_reader r(data);
    window_change_request w;
    w.cols = r.u32();
    w.rows = r.u32();
    w.width_px = r.u32();
    w.height_px = r.u32();
    return finish(r, w);
}

bytes env_request::encode() const
{
    bytes out;
    wire_writer(out).string(name).string(value);
    return out;
}

result<env_request> env_request::decode(byte_span data)
{
    wire_reader r(data);
    env_request e;
    e.name = std::string(r.text(1024));
    e.value = std::string(r.text(64 * 1024));
    return finish(r, std::move(e));
}

bytes string_request::encode() const
{
    bytes out;
    wire_writer(out).string(value);
    return out;
}

result<string_request> string_request::decode(byte_span data, std::size_t max)
{
    wire_reader r(data);
    string_request s;
    s.value = std::string(r.text(max));
    return finish(r, std::move(s));
}

bytes signal_request::encode() const
{
    bytes out;
    wire_writer(out).string(name);
    return out;
}

result<signal_request> signal_request::decode(byte_span data)
{
    wire_reader r(data);
    signal_request s;
    s.name = std::string(r.text(64));
    return finish(r, std::move(s));
}

bytes exit_status_request::encode() const
{
    bytes out;
    wire_writer(out).u32(status);
    return out;
}

result<exit_status_request> exit_status_request::decode(byte_span data)
{
    wire_reader r(data);
    exit_status_request e;
    e.status = r.u32();
    return finish(r, e);
}

bytes exit_signal_request::encode() const
{
    bytes out;
    wire_writer(out).string(signal).boolean(core_dumped).string(message).string(language);
    return out;
}

result<exit_signal_request> exit_signal_request::decode(byte_span data)
{
    wire_reader r(data);
    exit_signal_request e;
    e.signal = std::string(r.text(64));
    e.core_dumped = r.boolean();
    e.message = std::string(r.text(4096));
    e.language = std::string(r.text(256));
    return finish(r, std::move(e));
}

result<std::vector<terminal_mode>> decode_terminal_modes(byte_span modes)
{
    std::vector<terminal_mode> out;
    wire_reader r(modes);
    while (r.remaining() > 0) {
        const std::uint8_t op = r.u8();
        if (op == 0)
            break; // TTY_OP_END; anything after it is ignored, as OpenSSH does
        // Opcodes 160 and above carry no defined argument: stop parsing there.
        if (op >= 160)
            break;
        const std::uint32_t v = r.u32();
        if (!r.ok())
            return errc::malformed;
        if (out.size() >= 256)
            return errc::too_large;
        out.push_back({op, v});
    }
    if (!r.ok())
        return errc::malformed;
    return out;
}

bytes encode_terminal_modes(const std::vector<terminal_mode>& modes)
{
    bytes out;
    wire_writer w(out);
    for (const auto& m : modes)
        w.u8(m.opcode).u32(m.value);
    w.u8(0);
    return out;
}

} // namespace longhaul
