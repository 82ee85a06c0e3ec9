// ssh-add's actions over an agent connection, with OpenSSH 9.2's messages,
// output streams and exit statuses: adding key files (and their
// "-cert.pub" certificates) and an authenticator's resident keys, removing
// them, listing, locking, testing.
#pragma once

#include "common/auth/agent_client.hpp"
#include "common/bytes.hpp"
#include "ssh/add/add_format.hpp"
#include "ssh/add/add_options.hpp"

#include <optional>
#include <string>
#include <vector>

namespace longhaul::add {

// The constraints ssh-add sends with a key: -t (0: none), -c, -h's
// destinations, and, for a FIDO security key only, its provider
// (security_key_provider(options, env_provider)).
agent::key_constraints add_constraints(const add_options& options,
                                       const std::vector<agent::destination_constraint>& destinations,
                                       bool security_key, const char* env_provider);

// The default identities, in the order OpenSSH 9.2 tries them, relative to
// the home directory (OpenSSH takes it from the password database, not
// from $HOME).
std::vector<std::string> default_identity_files(const std::string& home);

// A public key file as OpenSSH's sshkey_load_public reads it: `path` as a
// key or certificate line, else `path`.pub, else the public key an
// openssh-key-v1 private key keeps in the clear. The comment is empty when
// the line has none. nullopt with errno-like `saved_errno` (ENOENT when
// nothing was found, as OpenSSH pretends).
struct loaded_public {
    shown_key key;
    std::string comment;
};
std::optional<loaded_public> load_public(const std::string& path, int& saved_errno);

class add_session {
public:
    add_session(agent_client& agent, const add_options& options) : agent_(agent), options_(options) {}
    add_session(const add_session&) = delete;
    add_session& operator=(const add_session&) = delete;

    // Runs what the options ask for; the exit status.
    int run();

private:
    bool list();
    bool lock_or_unlock(bool lock);
    bool remove_all();
    bool test_key(const std::string& path);
    bool do_file(const std::string& path);
    bool add_file(const std::string& path);
    void add_certificate(const std::string& path, const private_key& key, const std::string& comment);
    bool delete_file(const std::string& path);
    bool delete_stdin();
    // comment: nullopt prints "no comment", as OpenSSH does for a NULL one.
    bool delete_one(const shown_key& key, const std::optional<std::string>& comment, const std::string& path);
    // The passphrase prompt; nullopt when the user gave none.
    std::optional<secret_bytes> ask(const std::string& prompt);
    void print_added(const char* what, const std::string& path, const std::string& name) const;
    // A FIDO security key read from a file, and its "-cert.pub".
    bool add_security_key_file(const std::string& name, const openssh_security_key& key);
    // Parses `file` with parse(file, passphrase): no passphrase, then the
    // last one that worked, then asking; nullopt, said, when it fails.
    template <typename T, typename Parse>
    std::optional<T> load_with_passphrase(const std::string& name, std::string_view file, Parse parse);
    // -t, -c, -h (and, for security keys, the provider) as the agent takes them.
    agent::key_constraints key_constraints(bool security_key = false) const;
    // -s / -e: the agent loads or unloads a PKCS#11 module.
    bool update_card(bool add);
    // -K: the authenticator's resident keys, each added with the provider
    // (add_resident.cpp).
    bool load_resident();
    // -t's and -c's lines after "... added: ..." (unless -q).
    void print_constraints() const;

    agent_client& agent_;
    const add_options& options_;
    // -h, resolved against the known_hosts files once per run.
    std::vector<agent::destination_constraint> destinations_;
    // The last passphrase that worked, tried first on the next file (as
    // OpenSSH does); wiped when it fails.
    std::optional<secret_bytes> last_passphrase_;
};

} // namespace longhaul::add
