#include "channel/forward/forward_messages.hpp"

#include "channel/forward/message_fields.hpp"

#include "common/wire.hpp"

#include <sys/un.h>

namespace longhaul::forward {

const std::size_t max_socket_path = sizeof(sockaddr_un::sun_path) - 1;

namespace {

using detail::finish_message;
using detail::read_cstring;
using detail::read_port;

bool over(const std::string& s, std::size_t max) { return s.size() > max; }

} // namespace

bytes direct_tcpip_open::encode() const
{
    bytes out;
    wire_writer(out).string(host).u32(port).string(originator).u32(originator_port);
    return out;
}

result<direct_tcpip_open> direct_tcpip_open::decode(byte_span data)
{
    wire_reader r(data);
    direct_tcpip_open m;
    bool big = false;
    m.host = read_cstring(r);
    m.port = read_port(r, big);
    m.originator = read_cstring(r);
    m.originator_port = read_port(r, big);
    big = big || over(m.host, max_forward_host) || over(m.originator, max_forward_host);
    return finish_message(r, std::move(m), big);
}

bytes forwarded_tcpip_open::encode() const
{
    bytes out;
    wire_writer(out).string(address).u32(port).string(originator).u32(originator_port);
    return out;
}

result<forwarded_tcpip_open> forwarded_tcpip_open::decode(byte_span data)
{
    wire_reader r(data);
    forwarded_tcpip_open m;
    bool big = false;
    m.address = read_cstring(r);
    m.port = read_port(r, big);
    m.originator = read_cstring(r);
    m.originator_port = read_port(r, big);
    big = big || over(m.address, max_forward_host) || over(m.originator, max_forward_host);
    return finish_message(r, std::move(m), big);
}

bytes direct_streamlocal_open::encode() const
{
    bytes out;
    wire_writer(out).string(path).string(originator).u32(originator_port);
    return out;
}

result<direct_streamlocal_open> direct_streamlocal_open::decode(byte_span data)
{
    wire_reader r(data);
    direct_streamlocal_open m;
    bool big = false;
    m.path = read_cstring(r);
    m.originator = read_cstring(r);
    m.originator_port = read_port(r, big);
    big = big || over(m.path, max_socket_path) || over(m.originator, max_forward_host);
    return finish_message(r, std::move(m), big);
}

bytes forwarded_streamlocal_open::encode() const
{
    bytes out;
    wire_writer(out).string(path).string(reserved);
    return out;
}

result<forwarded_streamlocal_open> forwarded_streamlocal_open::decode(byte_span data)
{
    wire_reader r(data);
    forwarded_streamlocal_open m;
    m.path = read_cstring(r);
    m.reserved = read_cstring(r);
    const bool big = over(m.path, max_socket_path) || over(m.reserved, max_forward_host);
    return finish_message(r, std::move(m), big);
}

bytes tcpip_forward_request::encode() const
{
    bytes out;
    wire_writer(out).string(address).u32(port);
    return out;
}

result<tcpip_forward_request> tcpip_forward_request::decode(byte_span data)
{
    wire_reader r(data);
    tcpip_forward_request m;
    bool big = false;
    m.address = read_cstring(r);
    m.port = read_port(r, big);
    big = big || over(m.address, max_forward_host);
    return finish_message(r, std::move(m), big);
}

bytes tcpip_forward_reply::encode() const
{
    bytes out;
    wire_writer(out).u32(port);
    return out;
}

result<tcpip_forward_reply> tcpip_forward_reply::decode(byte_span data)
{
    wire_reader r(data);
    tcpip_forward_reply m;
    bool big = false;
    m.port = read_port(r, big);
    return finish_message(r, m, big);
}

bytes streamlocal_forward_request::encode() const
{
    bytes out;
    wire_writer(out).string(path);
    return out;
}

result<streamlocal_forward_request> streamlocal_forward_request::decode(byte_span data)
{
    wire_reader r(data);
    streamlocal_forward_request m;
    m.path = read_cstring(r);
    const bool big = over(m.path, max_socket_path);
    return finish_message(r, std::move(m), big);
}

namespace {

template <class T>
result<forward_open> open_of(byte_span data)
{
    auto r = T::decode(data);
    if (!r)
        return r.error();
    return forward_open(std::move(*r));
}

template <class T, forward_request_kind Kind>
result<forward_request> request_of(byte_span data)
{
    auto r = T::decode(data);
    if (!r)
        return r.error();
    return forward_request{Kind, std::move(*r)};
}

struct open_entry {
    std::string_view type;
    result<forward_open> (*decode)(byte_span);
};
constexpr open_entry open_table[] = {
    {direct_tcpip_type, open_of<direct_tcpip_open>},
    {forwarded_tcpip_type, open_of<forwarded_tcpip_open>},
    {direct_streamlocal_type, open_of<direct_streamlocal_open>},
    {forwarded_streamlocal_type, open_of<forwarded_streamlocal_open>},
};

using k = forward_request_kind;
struct request_entry {
    std::string_view name;
    result<forward_request> (*decode)(byte_span);
};
constexpr request_entry request_table[] = {
    {tcpip_forward_name, request_of<tcpip_forward_request, k::tcpip_forward>},
    {cancel_tcpip_forward_name, request_of<tcpip_forward_request, k::cancel_tcpip_forward>},
    {streamlocal_forward_name, request_of<streamlocal_forward_request, k::streamlocal_forward>},
    {cancel_streamlocal_forward_name, request_of<streamlocal_forward_request, k::cancel_streamlocal_forward>},
};

} // namespace

result<forward_open> decode_forward_open(std::string_view type, byte_span data)
{
    for (const auto& e : open_table)
        if (e.type == type)
            return e.decode(data);
    return errc::unsupported;
}

result<forward_request> decode_forward_request(std::string_view name, byte_span data)
{
    for (const auto& e : request_table)
        if (e.name == name)
            return e.decode(data);
    return errc::unsupported;
}

} // namespace longhaul::forward
