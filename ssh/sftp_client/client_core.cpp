#include "ssh/sftp_client/client_core.hpp"

#include "common/sftp/sftp_framing.hpp"
#include "common/wire.hpp"

#include <cstdio>
#include <cstring>

namespace longhaul::sftp {

namespace {

// The fixed part of a WRITE before the handle and after it:
// uint32 length, byte type, uint32 id, uint32 handle length | uint64 offset, uint32 data length.
constexpr std::size_t write_prefix = 4 + 1 + 4 + 4;
constexpr std::size_t write_suffix = 8 + 4;

std::uint32_t reply_id(const reply& r) noexcept
{
    return std::visit(
        [](const auto& m) -> std::uint32_t {
            if constexpr (requires { m.id; })
                return m.id;
            else
                return 0;
        },
        r);
}

} // namespace

client_core::client_core(std::uint32_t max_reply_length) : max_reply_length_(max_reply_length) {}

void client_core::start()
{
    if (started_)
        return;
    started_ = true;
    out_.append(init_request{}.encode());
}

bool client_core::has_extension(std::string_view name, std::string_view version) const noexcept
{
    for (const auto& e : version_.extensions)
        if (e.name == name && (version.empty() || e.data == version))
            return true;
    return false;
}

mutable_byte_span client_core::prepare_write(byte_span handle, std::uint64_t offset, std::size_t max_data)
{
    write_id_ = next_id_;
    write_header_ = write_prefix + handle.size() + write_suffix;
    auto space = out_.prepare(write_header_ + max_data);
    if (space.empty())
        return {};
    std::uint8_t* p = space.data();
    write_packet_ = p;
    write_id_ = next_id_;
    // The length is patched in by commit_write().
    p[4] = fxp::write;
    store_u32(p + 5, write_id_);
    store_u32(p + 9, static_cast<std::uint32_t>(handle.size()));
    if (!handle.empty())
        std::memcpy(p + write_prefix, handle.data(), handle.size());
    store_u64(p + write_prefix + handle.size(), offset);
    return space.subspan(write_header_, max_data);
}

std::uint32_t client_core::commit_write(std::size_t n, reply_handler h)
{
    if (failed_) {
        answer_lost(write_id_, h);
        return write_id_;
    }
    std::uint8_t* p = write_packet_;
    store_u32(p + write_header_ - 4, static_cast<std::uint32_t>(n));
    store_u32(p, static_cast<std::uint32_t>(write_header_ - 4 + n));
    out_.commit(write_header_ + n);
    ++next_id_;
    pending_.emplace(write_id_, std::move(h));
    ++requests_sent_;
    return write_id_;
}

mutable_byte_span client_core::input_space(std::size_t at_least)
{
    return in_.prepare(at_least);
}

void client_core::feed(byte_span data)
{
    in_.append(data);
    process();
}

void client_core::process()
{
    // A handler that pumps the link would re-enter here; it must not.
    if (processing_)
        return;
    processing_ = true;
    while (!failed_) {
        const frame f = read_frame(in_.data(), max_reply_length_);
        if (f.status == errc::incomplete)
            break;
        if (f.status == errc::too_large) {
            char m[80];
            std::snprintf(m, sizeof m, "Received message too long %u", f.length);
            fail(m);
            break;
        }
        if (f.status != errc::ok) {
            fail("Received malformed message (zero length)");
            break;
        }
        const std::size_t size = f.size();
        handle_packet(f.packet);
        in_.consume(size);
    }
    processing_ = false;
}

void client_core::handle_packet(byte_span packet)
{
    auto decoded = decode_reply(packet);
    if (!decoded) {
        char m[96];
        std::snprintf(m, sizeof m, "Couldn't decode reply of type %u: %s", unsigned(packet[0]),
                      std::string(to_string(decoded.error())).c_str());
        fail(m);
        return;
    }
    if (auto* v = std::get_if<version_reply>(&*decoded)) {
        if (initialised_ || !started_) {
            fail("Received an unexpected SSH2_FXP_VERSION");
            return;
        }
        version_ = std::move(*v);
        initialised_ = true;
        return;
    }
    if (!initialised_) {
        // OpenSSH's words for a server that answers INIT with anything else.
        char m[80];
        std::snprintf(m, sizeof m, "Invalid packet back from SSH2_FXP_INIT (type %u)", unsigned(packet[0]));
        fail(m);
        return;
    }
    const std::uint32_t id = reply_id(*decoded);
    auto it = pending_.find(id);
    if (it == pending_.end()) {
        char m[80];
        std::snprintf(m, sizeof m, "Received reply with unexpected id %u (type %u)", id, unsigned(packet[0]));
        fail(m);
        return;
    }
    // Out of the table before the call: the handler may send new requests.
    reply_handler h = std::move(it->second);
    pending_.erase(it);
    if (h)
        h(*decoded);
}

void client_core::input_closed()
{
    if (closed_)
        return;
    closed_ = true;
    // Whatever complete replies are buffered still count.
    process();
    if (!failed_ && !(requests_ended_ && pending_.empty()))
        fail("Connection closed");
}

void client_core::fail(std::string message)
{
    if (failed_)
        return;
    failed_ = true;
    failure_ = std::move(message);
    fail_pending();
}

void client_core::answer_lost(std::uint32_t id, const reply_handler& h)
{
    if (!h)
        return;
    const reply r = status_reply{.id = id,
                                 .code = static_cast<std::uint32_t>(status_code::connection_lost),
                                 .message = "Connection lost",
                                 .language = {}};
    h(r);
}

void client_core::fail_pending()
{
    // Handlers may drop other requests' state; take the table first.
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& [id, h] : pending)
        answer_lost(id, h);
}

} // namespace longhaul::sftp
