// sshd's log lines for the end of a connection, in OpenSSH's words: the
// same lines from the sandboxed pre-authentication child and from the
// process that serves the user.
#include "sshd/connection_log.hpp"

namespace longhaul {

void log_disconnect(logger& log, const connection_facts& facts, const transport_event& ev, const server_auth* auth,
                    const std::string* authenticated_user)
{
    const std::string peer = facts.remote_address + " port " + std::to_string(facts.remote_port);
    const char* tag = authenticated_user != nullptr ? "" : " [preauth]";
    if (!ev.local) {
        log.info("Received disconnect from " + peer + ":" + std::to_string(static_cast<std::uint32_t>(ev.reason)) +
                  ": " + std::string(ev.text) + tag);
        if (authenticated_user != nullptr)
            log.info("Disconnected from user " + *authenticated_user + " " + peer);
        else if (auth)
            log.info(auth->disconnected_line());
    } else if (ev.error == errc::connection_closed) {
        if (authenticated_user != nullptr)
            log.info("Connection closed by " + peer);
        else if (auth)
            log.info(auth->connection_closed_line());
        else
            log.info("Connection closed by " + peer + " [preauth]");
    } else if (ev.error != errc::ok) {
        if (ev.error == errc::bad_version)
            log.error("kex_exchange_identification: " + std::string(ev.text));
        else if (ev.error == errc::strict_kex_violation)
            // OpenSSH's ssh_packet_disconnect(): the line fail2ban filters match.
            log.info("Disconnecting " + peer + ": " + std::string(ev.text) + tag);
        else if (ev.error == errc::no_matching_algorithm)
            log.error("Unable to negotiate with " + peer + ": " + std::string(ev.text) +
                       tag);
        else
            log.error(std::string(ev.text) + tag);
    }
}


} // namespace longhaul
