// What ssh-keygen and ssh-add share around a SecurityKeyProvider: loading
// it with OpenSSH's lines on failure, OpenSSH's words for the middleware's
// error codes, and which resident credentials OpenSSH keeps (its
// sshsk_load_resident).
#pragma once

#include "common/keys/openssh_key_v1.hpp"
#include "ssh/sk/sk_provider.hpp"

#include <optional>
#include <string>
#include <vector>

namespace longhaul {

// OpenSSH's ssh_err() words for what the middleware can fail with.
const char* sk_error_text(int code);

// The provider at `path`, or nullopt after its load failure's lines are
// printed (OpenSSH's, ending in "\r\n"), with the words for the final
// message in `why`. The built-in middleware ("internal") is not supported
// yet: `why` says so, naming `option` (-w for ssh-keygen, -S for ssh-add)
// as the way to name a library.
std::optional<sk_provider> load_sk_provider(const std::string& path, const char* option, std::string& why);

// A failed middleware call of a listing (-K): prints OpenSSH's line for it
// ("Provider \"PATH\" returned failure N" when the middleware itself
// failed, the wrapper's words otherwise) and returns the words for
// "Unable to load resident keys: ...".
const char* report_sk_failure(const std::string& path, const sk_failure& f);

// A resident credential as OpenSSH keeps it: the key with the flags a
// resident key has (touch, resident, and verify when the credential says
// so), its application as the comment, and the user id (ssh-keygen -K
// names its file after it).
struct sk_resident_record {
    openssh_security_key record;
    bytes user_id;
};

// sshsk_load_resident's filter over a listing: "ssh:" applications of
// Ed25519 and P-256 only, in the listing's order. nullopt when a kept
// credential's public key is not of its type's form (OpenSSH: "invalid
// format").
std::optional<std::vector<sk_resident_record>> resident_records(std::vector<sk_resident_result> listed);

} // namespace longhaul
