// Hostbased authentication's host checks, as OpenSSH's auth-rhosts.c and
// hostbased_key_allowed() (auth2-hostbased.c) make them: the client host
// and its user against /etc/hosts.equiv, /etc/ssh/shosts.equiv, ~/.shosts
// and ~/.rhosts (IgnoreRhosts, StrictModes; the system files never for
// root), then the client host's key against /etc/ssh/ssh_known_hosts and
// ~/.ssh/known_hosts (IgnoreUserKnownHosts), the "2" files as a fallback.
// The signature over the request is the caller's to check.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "sshd/privileges.hpp"
#include "sshd/sshd_config.hpp"
#include "sshd/user_account.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// check_rhosts_file() on a file's text: true when an entry names the
// client host (by name, case-insensitively, or by address; "@group" as a
// netgroup) and the client user (a host alone means the same user as the
// server's), unless that first matching entry is negated ("-host",
// "-user"). Lines are read as fgets() reads them into 1024 bytes; '+' and
// '-' alone, and lines with a third word, are skipped. `notes` gets
// OpenSSH's auth_debug lines.
bool rhosts_text_allows(std::string_view text, std::string_view hostname, std::string_view ipaddr,
                        std::string_view client_user, std::string_view server_user, std::string_view filename,
                        std::vector<std::string>* notes = nullptr);

// Where the system files are (tests point them elsewhere).
struct hostbased_files {
    std::string hosts_equiv = "/etc/hosts.equiv";
    std::string shosts_equiv = "/etc/ssh/shosts.equiv";
    std::string system_known_hosts = "/etc/ssh/ssh_known_hosts";
    std::string system_known_hosts2 = "/etc/ssh/ssh_known_hosts2";
};

struct hostbased_query {
    const user_account* user = nullptr;
    const user_groups* groups = nullptr; // the user's files are read as the user
    std::string client_user;
    std::string client_host;    // as the client sent it
    std::string remote_address; // the connection's peer
    std::string remote_host;    // its canonical name with UseDNS, else the address
    const public_key* key = nullptr;
    const certificate* cert = nullptr; // a host certificate for `key` (its CA signature checked)
};

struct hostbased_verdict {
    bool allowed = false;
    std::vector<log_message> log; // what OpenSSH logs on the way, printable
};

// hostbased_key_allowed(): the host's name is the client's own with
// HostbasedUsesNameFromPacketOnly, else the connection's (a difference is
// logged as OpenSSH does); that name and the address must be allowed by an
// equiv or rhosts file, and the key must be known for the name (a host
// certificate: valid now, for that name, its CA @cert-authority for it).
hostbased_verdict hostbased_key_allowed(const server_config& c, const hostbased_query& q,
                                        const hostbased_files& files = {});

} // namespace longhaul
