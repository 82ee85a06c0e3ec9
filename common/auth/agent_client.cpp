#include "common/auth/agent_client.hpp"

#include "common/auth/agent_key_blob.hpp"
#include "common/wire.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace longhaul {

namespace {

using clock_type = std::chrono::steady_clock;

// Waits until fd is ready for `events` or the deadline passes.
errc wait_for(int fd, short events, clock_type::time_point deadline)
{
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
        if (left.count() <= 0)
            return errc::timeout;
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
        if (n > 0)
            return errc::ok;
        if (n == 0)
            return errc::timeout;
        if (errno != EINTR)
            return errc::io_error;
    }
}

errc write_all(int fd, byte_span data, clock_type::time_point deadline)
{
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n > 0) {
            data = data.subspan(static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (auto e = wait_for(fd, POLLOUT, deadline); e != errc::ok)
                return e;
            continue;
        }
        return errc::io_error;
    }
    return errc::ok;
}

errc read_exact(int fd, mutable_byte_span out, clock_type::time_point deadline)
{
    while (!out.empty()) {
        const ssize_t n = ::recv(fd, out.data(), out.size(), 0);
        if (n > 0) {
            out = out.subspan(static_cast<std::size_t>(n));
            continue;
        }
        if (n == 0)
            return errc::connection_closed;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (auto e = wait_for(fd, POLLIN, deadline); e != errc::ok)
                return e;
            continue;
        }
        return errc::io_error;
    }
    return errc::ok;
}

} // namespace

result<agent_client> agent_client::connect(const std::string& socket_path, std::chrono::milliseconds timeout)
{
    sockaddr_un addr{};
    if (socket_path.empty() || socket_path.size() >= sizeof(addr.sun_path))
        return errc::invalid_argument;
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());

    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return errc::io_error;
    agent_client c(fd, timeout);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
        if (errno != EINPROGRESS && errno != EAGAIN)
            return errc::io_error;
        if (auto e = wait_for(fd, POLLOUT, clock_type::now() + timeout); e != errc::ok)
            return e;
        int err = 0;
        socklen_t len = sizeof(err);
        if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)
            return errc::io_error;
    }
    return c;
}

agent_client::agent_client(agent_client&& o) noexcept : fd_(o.fd_), timeout_(o.timeout_) { o.fd_ = -1; }

agent_client& agent_client::operator=(agent_client&& o) noexcept
{
    if (this != &o) {
        close();
        fd_ = o.fd_;
        timeout_ = o.timeout_;
        o.fd_ = -1;
    }
    return *this;
}

agent_client::~agent_client() { close(); }

void agent_client::close() noexcept
{
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
}

result<bytes> agent_client::transact(byte_span request)
{
    // The agent would refuse a message over its limit; say so here and keep
    // the connection (nothing was sent).
    if (request.size() - 4 > agent::max_message)
        return errc::too_large;
    if (fd_ < 0)
        return errc::connection_closed;
    const auto deadline = clock_type::now() + timeout_;
    errc e = write_all(fd_, request, deadline);
    std::uint8_t len_bytes[4];
    if (e == errc::ok)
        e = read_exact(fd_, len_bytes, deadline);
    if (e != errc::ok) {
        close();
        return e;
    }
    const std::uint32_t len = load_u32(len_bytes);
    if (len == 0 || len > agent::max_message) {
        close();
        return len == 0 ? errc::malformed : errc::too_large;
    }
    bytes body(len);
    if (e = read_exact(fd_, body, deadline); e != errc::ok) {
        close();
        return e;
    }
    return body;
}

result<std::vector<agent::identity>> agent_client::request_identities()
{
    auto body = transact(agent::encode_request_identities());
    if (!body)
        return body.error();
    return agent::decode_identities_answer(*body);
}

result<bytes> agent_client::sign(byte_span key_blob, byte_span data, std::uint32_t flags)
{
    bytes request = agent::encode_sign_request(key_blob, data, flags);
    auto body = transact(request);
    if (!body)
        return body.error();
    return agent::decode_sign_response(*body);
}

result<void> agent_client::bind_session(byte_span host_key_blob, byte_span session_id, byte_span signature,
                                        bool forwarding)
{
    bytes request = agent::encode_session_bind(host_key_blob, session_id, signature, forwarding);
    auto body = transact(request);
    if (!body)
        return body.error();
    return agent::decode_success(*body);
}

result<void> agent_client::add_identity(const private_key& key, const certificate* cert, std::string_view comment,
                                        const agent::key_constraints& constraints)
{
    // Room for the largest key fields up front: a reallocation would leave
    // unwiped copies of the private key behind.
    bytes fields;
    fields.reserve(32 * 1024 + (cert != nullptr ? cert->blob().size() : 0));
    wire_writer w(fields);
    auto encoded = agent::encode_private_key(w, key, cert);
    if (!encoded) {
        cleanse(fields.data(), fields.size());
        return encoded.error();
    }
    secret_bytes request = agent::encode_add_identity(fields, comment, constraints);
    cleanse(fields.data(), fields.size());
    auto body = transact(request);
    if (!body)
        return body.error();
    return agent::decode_success(*body);
}

result<void> agent_client::add_security_key(const openssh_security_key& key, const certificate* cert,
                                            std::string_view comment, const agent::key_constraints& constraints)
{
    // No secret in it: the key handle is what the authenticator signs with.
    bytes fields;
    wire_writer w(fields);
    if (auto encoded = agent::encode_security_key(w, key, cert); !encoded)
        return encoded.error();
    auto body = transact(agent::encode_add_identity(fields, comment, constraints));
    if (!body)
        return body.error();
    return agent::decode_success(*body);
}

result<void> agent_client::update_card(bool add, std::string_view provider, byte_span pin,
                                       const agent::key_constraints& constraints)
{
    auto body = transact(agent::encode_update_card(add, provider, pin, constraints));
    if (!body)
        return body.error();
    return agent::decode_success(*body);
}

result<void> agent_client::remove_identity(byte_span key_blob)
{
    auto body = transact(agent::encode_remove_identity(key_blob));
    if (!body)
        return body.error();
    return agent::decode_success(*body);
}

result<void> agent_client::remove_all_identities()
{
    auto body = transact(agent::encode_remove_all_identities());
    if (!body)
        return body.error();
    auto ok = agent::decode_success(*body);
    // Any answer will do, or none: only SSH1 agents knew this request.
    (void)transact(agent::encode_remove_all_rsa_identities());
    return ok;
}

result<void> agent_client::lock(std::string_view password, bool locking)
{
    auto body = transact(agent::encode_lock(password, locking));
    if (!body)
        return body.error();
    return agent::decode_success(*body);
}

result<std::vector<std::string>> agent_client::query_extensions()
{
    auto body = transact(agent::encode_query());
    if (!body)
        return body.error();
    return agent::decode_query_answer(*body);
}

} // namespace longhaul
