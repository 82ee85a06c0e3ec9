// What a master does for its mux clients' forwarding requests, as
// OpenSSH's mux master does it (mux.c): OPEN_FWD adds a -L, -D or -R to
// this connection (a forward already there is answered OK, a -R 0 already
// granted with its port), CLOSE_FWD cancels one (only one that was asked
// for, by the master's command line or a mux client), and NEW_STDIO_FWD
// is `ssh -W` through the master: a direct-tcpip channel carried on the
// two descriptors the mux client passed, answered once the server has
// confirmed it, and the mux client's connection closed when the channel
// is over (which is how it learns that the forward ended).
#include "ssh/detail/mux_master_state.hpp"
#include "ssh/detail/ssh_client.hpp"
#include "ssh/mux_forward_spec.hpp"

#include "channel/io/fd_pump.hpp"
#include "common/text.hpp"

#include <algorithm>
#include <unistd.h>

namespace longhaul::detail {

namespace {

std::vector<forward_spec>::iterator find_forward(std::vector<forward_spec>& list, const forward_spec& f)
{
    return std::find(list.begin(), list.end(), f);
}

} // namespace

void ssh_client::mux_open_forward(std::uint32_t peer_id, const mux::forward_request& req)
{
    auto control = mux_->peers[peer_id].control;
    const std::uint32_t rid = req.request_id;
    auto fail = [&](const std::string& why) { control->send(mux::error_reply{mux::msg::failure, rid, why}); };
    std::string why;
    auto spec = forward_of_mux_request(req, why);
    if (!spec) {
        log_.info("mux_master_process_open_fwd: " + why);
        return fail("Invalid forwarding request");
    }
    const auto kind = static_cast<mux::fwd_kind>(req.kind);
    const std::string desc = describe_mux_forward(kind, *spec, cfg_.gateway_ports.value_or(false));
    log_.debug2("mux_master_process_open_fwd: channel " + std::to_string(peer_id) + ": request " + desc);
    if (kind == mux::fwd_kind::remote) {
        if (find_forward(cfg_.remote_forwards, *spec) != cfg_.remote_forwards.end()) {
            if (spec->listen_port != 0) {
                log_.debug2("mux_master_process_open_fwd: found existing forwarding");
                return control->send(mux::status_reply{mux::msg::ok, rid});
            }
            log_.debug2("mux_master_process_open_fwd: found allocated port");
            const int port = remote_forwards_->allocated_port(*spec).value_or(0);
            return control->send(mux::remote_port{rid, static_cast<std::uint32_t>(port)});
        }
        if (!mux_permitted("Open " + desc + " on " + host_ + "?", "forwarding")) {
            control->send(mux::error_reply{mux::msg::permission_denied, rid, "Permission denied"});
            return;
        }
        cfg_.remote_forwards.push_back(*spec);
        // The reply waits for the server's; no other request is read meanwhile.
        control->pause();
        remote_forwards_->request(
            *spec, client_remote_forwards::reporting::mux,
            [this, control, rid, spec = *spec](bool ok, int allocated) {
                if (ok && spec.listen_port == 0) {
                    control->send(mux::remote_port{rid, static_cast<std::uint32_t>(allocated)});
                } else if (ok) {
                    control->send(mux::status_reply{mux::msg::ok, rid});
                } else {
                    if (auto it = find_forward(cfg_.remote_forwards, spec); it != cfg_.remote_forwards.end())
                        cfg_.remote_forwards.erase(it);
                    control->send(mux::error_reply{
                        mux::msg::failure, rid,
                        spec.listen_path ? "remote port forwarding failed for listen path " + printable(*spec.listen_path)
                                         : "remote port forwarding failed for listen port " +
                                               std::to_string(spec.listen_port)});
                }
                control->resume();
            });
        driver_->flush();
        return;
    }
    if (find_forward(cfg_.local_forwards, *spec) != cfg_.local_forwards.end()) {
        log_.debug2("mux_master_process_open_fwd: found existing forwarding");
        return control->send(mux::status_reply{mux::msg::ok, rid});
    }
    if (!mux_permitted("Open " + desc + " on " + host_ + "?", "forwarding")) {
        control->send(mux::error_reply{mux::msg::permission_denied, rid, "Permission denied"});
        return;
    }
    if (!forwards_ || !forwards_->listen(*spec)) {
        log_.info("mux_master_process_open_fwd: requested " + desc + " failed");
        return fail("Port forwarding failed");
    }
    cfg_.local_forwards.push_back(*spec);
    control->send(mux::status_reply{mux::msg::ok, rid});
}

void ssh_client::mux_close_forward(std::uint32_t peer_id, const mux::forward_request& req)
{
    auto control = mux_->peers[peer_id].control;
    const std::uint32_t rid = req.request_id;
    std::string why;
    auto spec = forward_of_mux_request(req, why);
    const auto kind = static_cast<mux::fwd_kind>(req.kind);
    if (spec)
        log_.debug2("mux_master_process_close_fwd: channel " + std::to_string(peer_id) + ": request cancel " +
                    describe_mux_forward(kind, *spec, cfg_.gateway_ports.value_or(false)));
    // Only what was asked for can be cancelled (OpenSSH looks in its
    // options' forward lists); a malformed one matches nothing.
    auto& list = kind == mux::fwd_kind::remote ? cfg_.remote_forwards : cfg_.local_forwards;
    auto it = spec ? find_forward(list, *spec) : list.end();
    const char* error = nullptr;
    if (it == list.end())
        error = "port not forwarded";
    else if (kind == mux::fwd_kind::remote && !remote_forwards_->cancel_requested(*spec))
        error = "port not in permitted opens";
    else if (kind != mux::fwd_kind::remote &&
             (!forwards_ || !forwards_->cancel(*spec, kind == mux::fwd_kind::dynamic)))
        error = "port not found";
    if (error != nullptr) {
        control->send(mux::error_reply{mux::msg::failure, rid, error});
        return;
    }
    list.erase(it);
    driver_->flush();
    control->send(mux::status_reply{mux::msg::ok, rid});
}

void ssh_client::open_mux_stdio(std::uint32_t peer_id, const mux::stdio_forward& req, mux::passed_fds fds)
{
    auto& peer = mux_->peers[peer_id];
    auto control = peer.control;
    const std::uint32_t rid = req.request_id;
    log_.debug2("mux_master_process_stdio_fwd: channel " + std::to_string(peer_id) + ": stdio fwd to " +
                printable(req.host) + ":" + std::to_string(req.port));
    if (peer.session || peer.stdio) {
        control->send(mux::error_reply{mux::msg::failure, rid, "Multiple sessions not supported"});
        return;
    }
    if ((req.port > 65535 && req.port != mux::port_streamlocal) || !forwards_) {
        control->send(mux::error_reply{mux::msg::failure, rid, "Invalid forwarding request"});
        return;
    }
    if (!mux_permitted("Allow forward to " + printable(req.host) + ":" + std::to_string(req.port) + "? ",
                       "stdio fwd")) {
        control->send(mux::error_reply{mux::msg::permission_denied, rid, "Permission denied"});
        return;
    }
    const std::vector<int> fd = fds.release();
    // Descriptions of our own, so that O_NONBLOCK does not reach the mux
    // client's (its shell's) copies; the passed ones are closed.
    const int in = private_nonblocking_fd(fd[0], false);
    const int out = private_nonblocking_fd(fd[1], true);
    ::close(fd[0]);
    ::close(fd[1]);
    if (in < 0 || out < 0) {
        if (in >= 0)
            ::close(in);
        if (out >= 0)
            ::close(out);
        control->send(mux::error_reply{mux::msg::failure, rid, "did not receive file descriptors"});
        return;
    }
    const int port = req.port == mux::port_streamlocal ? port_streamlocal : static_cast<int>(req.port);
    auto done = [this, peer_id, control] {
        if (!mux_)
            return;
        auto it = mux_->peers.find(peer_id);
        if (it == mux_->peers.end())
            return;
        it->second.session_done = true;
        control->close_after_output();
        mux_peer_done(peer_id);
    };
    auto ch = forwards_->open_stdio(
        in, out, req.host, port,
        [control, rid, peer_id, done](bool opened) {
            if (opened) {
                control->send(mux::session_opened{rid, peer_id});
                control->resume();
                return;
            }
            control->send(mux::error_reply{mux::msg::failure, rid, "Session open refused by peer"});
            done();
        },
        done);
    if (!ch) {
        control->send(mux::error_reply{mux::msg::failure, rid, "cannot open a channel"});
        return;
    }
    peer.stdio = ch;
    control->pause();
}

} // namespace longhaul::detail
