#include "ssh/mux/mux_messages.hpp"

#include "common/wire.hpp"

#include <algorithm>

namespace longhaul::mux {

namespace {

// A string as OpenSSH's sshbuf_get_cstring reads it: no NUL inside.
std::string c_string(wire_reader& r)
{
    const std::string_view s = r.text(max_message);
    if (s.find('\0') != std::string_view::npos)
        r.fail(errc::malformed);
    return r.ok() ? std::string(s) : std::string();
}


struct encoder {
    wire_writer& w;
    void operator()(const hello& m)
    {
        w.u32(m.version);
        for (const auto& [name, value] : m.extensions)
            w.string(name).string(value);
    }
    void operator()(const new_session& m)
    {
        w.u32(m.request_id).string(m.reserved);
        w.u32(m.want_tty).u32(m.want_x11).u32(m.want_agent).u32(m.subsystem);
        w.u32(m.escape_char).string(m.term).string(m.command);
        for (const auto& e : m.env)
            w.string(e);
    }
    void operator()(const simple_request& m) { w.u32(m.request_id); }
    void operator()(const forward_request& m)
    {
        w.u32(m.request_id).u32(m.kind).string(m.listen_host).u32(m.listen_port);
        w.string(m.connect_host).u32(m.connect_port);
    }
    void operator()(const stdio_forward& m) { w.u32(m.request_id).string(m.reserved).string(m.host).u32(m.port); }
    void operator()(const status_reply& m) { w.u32(m.request_id); }
    void operator()(const error_reply& m) { w.u32(m.request_id).string(m.reason); }
    void operator()(const exit_message& m) { w.u32(m.session_id).u32(m.status); }
    void operator()(const alive& m) { w.u32(m.request_id).u32(m.pid); }
    void operator()(const session_opened& m) { w.u32(m.request_id).u32(m.session_id); }
    void operator()(const remote_port& m) { w.u32(m.request_id).u32(m.port); }
    void operator()(const tty_alloc_fail& m) { w.u32(m.session_id); }
};

result<message> decode_hello(wire_reader& r)
{
    hello m;
    m.version = r.u32();
    while (r.ok() && r.remaining() > 0) {
        if (m.extensions.size() == max_extensions)
            return errc::too_large;
        std::string name = c_string(r);
        std::string value = c_string(r);
        if (r.ok())
            m.extensions.emplace_back(std::move(name), std::move(value));
    }
    if (!r.ok())
        return errc::malformed;
    return message(std::move(m));
}

result<message> decode_new_session(wire_reader& r)
{
    new_session m;
    m.request_id = r.u32();
    m.reserved = c_string(r);
    m.want_tty = r.u32() != 0;
    m.want_x11 = r.u32() != 0;
    m.want_agent = r.u32() != 0;
    m.subsystem = r.u32() != 0;
    m.escape_char = r.u32();
    m.term = c_string(r);
    m.command = c_string(r);
    while (r.ok() && r.remaining() > 0) {
        if (m.env.size() == max_environment)
            return errc::too_large;
        std::string e = c_string(r);
        if (r.ok())
            m.env.push_back(std::move(e));
    }
    if (!r.ok())
        return errc::malformed;
    return message(std::move(m));
}

// Fixed-layout messages: every field read, then nothing may be left.
result<message> finish(wire_reader& r, message m)
{
    if (!r.ok())
        return errc::malformed;
    if (r.remaining() > 0)
        return errc::trailing_data;
    return m;
}

} // namespace

msg type_of(const message& m) noexcept
{
    struct visitor {
        msg operator()(const hello&) const { return msg::hello; }
        msg operator()(const new_session&) const { return msg::new_session; }
        msg operator()(const simple_request& m) const { return m.type; }
        msg operator()(const forward_request& m) const { return m.type; }
        msg operator()(const stdio_forward&) const { return msg::new_stdio_fwd; }
        msg operator()(const status_reply& m) const { return m.type; }
        msg operator()(const error_reply& m) const { return m.type; }
        msg operator()(const exit_message&) const { return msg::exit_message; }
        msg operator()(const alive&) const { return msg::alive; }
        msg operator()(const session_opened&) const { return msg::session_opened; }
        msg operator()(const remote_port&) const { return msg::remote_port; }
        msg operator()(const tty_alloc_fail&) const { return msg::tty_alloc_fail; }
    };
    return std::visit(visitor{}, m);
}

bytes encode(const message& m)
{
    bytes out;
    wire_writer w(out);
    w.u32(static_cast<std::uint32_t>(type_of(m)));
    std::visit(encoder{w}, m);
    return out;
}

bytes frame(const message& m)
{
    bytes out;
    wire_writer w(out);
    const std::size_t mark = w.begin_string();
    w.u32(static_cast<std::uint32_t>(type_of(m)));
    std::visit(encoder{w}, m);
    w.end_string(mark);
    return out;
}

result<message> decode(byte_span body)
{
    if (body.size() > max_message)
        return errc::too_large;
    wire_reader r(body);
    const auto type = static_cast<msg>(r.u32());
    if (!r.ok())
        return errc::malformed;
    switch (type) {
    case msg::hello: return decode_hello(r);
    case msg::new_session: return decode_new_session(r);
    case msg::alive_check:
    case msg::terminate:
    case msg::stop_listening:
    case msg::proxy: return finish(r, simple_request{type, r.u32()});
    case msg::open_fwd:
    case msg::close_fwd: {
        forward_request m;
        m.type = type;
        m.request_id = r.u32();
        m.kind = r.u32();
        m.listen_host = c_string(r);
        m.listen_port = r.u32();
        m.connect_host = c_string(r);
        m.connect_port = r.u32();
        return finish(r, std::move(m));
    }
    case msg::new_stdio_fwd: {
        stdio_forward m;
        m.request_id = r.u32();
        m.reserved = c_string(r);
        m.host = c_string(r);
        m.port = r.u32();
        return finish(r, std::move(m));
    }
    case msg::ok:
    case msg::proxy_ok: return finish(r, status_reply{type, r.u32()});
    case msg::permission_denied:
    case msg::failure: {
        error_reply m;
        m.type = type;
        m.request_id = r.u32();
        m.reason = c_string(r);
        return finish(r, std::move(m));
    }
    case msg::exit_message: {
        exit_message m;
        m.session_id = r.u32();
        m.status = r.u32();
        return finish(r, m);
    }
    case msg::alive: {
        alive m;
        m.request_id = r.u32();
        m.pid = r.u32();
        return finish(r, m);
    }
    case msg::session_opened: {
        session_opened m;
        m.request_id = r.u32();
        m.session_id = r.u32();
        return finish(r, m);
    }
    case msg::remote_port: {
        remote_port m;
        m.request_id = r.u32();
        m.port = r.u32();
        return finish(r, m);
    }
    case msg::tty_alloc_fail: return finish(r, tty_alloc_fail{r.u32()});
    }
    return errc::unsupported;
}

std::size_t frame_reader::wanted() const noexcept
{
    if (!have_length_)
        return sizeof header_ - header_len_;
    return length_ - body_.size();
}

result<void> frame_reader::feed(byte_span data)
{
    if (data.size() > wanted())
        return errc::invalid_argument;
    if (!have_length_) {
        std::copy(data.begin(), data.end(), header_ + header_len_);
        header_len_ += data.size();
        if (header_len_ < sizeof header_)
            return {};
        length_ = load_u32(header_);
        if (length_ > max_message)
            return errc::too_large;
        if (length_ < 4)
            return errc::malformed;
        have_length_ = true;
        body_.reserve(length_);
        return {};
    }
    body_.insert(body_.end(), data.begin(), data.end());
    return {};
}

void frame_reader::reset() noexcept
{
    header_len_ = 0;
    have_length_ = false;
    length_ = 0;
    body_.clear();
}

} // namespace longhaul::mux
