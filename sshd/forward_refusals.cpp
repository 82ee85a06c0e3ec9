#include "sshd/forward_refusals.hpp"

#include "common/text.hpp"

namespace longhaul {

void register_forward_refusals(global_request_table& table, logger& log)
{
    auto refuse = [&log](connection& conn, std::string_view name, bool want_reply, byte_span) {
        log.verbose("refused " + printable(name) + ": forwarding is not supported yet");
        if (want_reply)
            conn.reply_global(false);
    };
    table.add("tcpip-forward", refuse);
    table.add("streamlocal-forward@openssh.com", refuse);
}

} // namespace longhaul
