// The server side of diffie-hellman-group-exchange: the groups of the
// ModuliFile, read once at start-up (OpenSSH rereads the file for every
// exchange; its content does not change under a running server in
// practice, and a re-read per connection is a cost with no benefit), and a
// gex_group_provider for key_exchange::server(). A connection process
// parses the listener's copy of the text only when a client asks for a
// group (deferred()): most connections never do, and Debian's 570 KB file
// took a fifth of a sanitized connection process's CPU to parse.
#pragma once

#include "common/crypto/moduli.hpp"
#include "common/random.hpp"
#include "common/transport/key_exchange.hpp"
#include "sshd/sshd_config.hpp"

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace longhaul {

class moduli_groups {
public:
    // Reads `path` (ModuliFile). Problems are logged as OpenSSH does, but
    // once: "WARNING: could not open /etc/ssh/moduli (No such file or
    // directory), using fixed modulus" (INFO) and "moduli:12: <reason>"
    // (ERROR) per bad line. A missing or empty file is not an error: the
    // built-in RFC 3526 groups are used.
    static std::shared_ptr<const moduli_groups> load(const std::string& path, std::vector<log_message>& log);
    // From text already in memory (tests).
    static std::shared_ptr<const moduli_groups> from_text(std::string_view text, const std::string& path,
                                                          std::vector<log_message>& log);
    // Text the listener read and reported on (a connection process's
    // rexec_state), parsed on the first size() or choose(); its bad lines
    // are skipped silently, having been logged once by the listener.
    static std::shared_ptr<const moduli_groups> deferred(std::string text, const std::string& path);

    const std::string& path() const noexcept { return path_; }
    std::size_t size() const { return groups().size(); }
    bool file_readable() const noexcept { return readable_; }

    // sshd's choose_dh. When no group fits and the file had groups, logs
    // "WARNING: no suitable primes in /etc/ssh/moduli" (INFO) to `log` if given.
    gex_choice choose(std::uint32_t min_bits, std::uint32_t preferred_bits, std::uint32_t max_bits,
                      random_source& rng, std::vector<log_message>* log = nullptr) const;

private:
    const std::vector<moduli_entry>& groups() const;

    std::string path_;
    // deferred()'s text until the first use parses it into groups_.
    mutable std::once_flag parsed_;
    mutable std::string pending_;
    mutable std::vector<moduli_entry> groups_;
    bool readable_ = false;
};

// The provider key_exchange::server() takes. `rng` must outlive it (it is
// the connection's). `log`, when set, receives the per-exchange warnings.
gex_group_provider make_gex_group_provider(std::shared_ptr<const moduli_groups> groups, random_source& rng,
                                           std::function<void(const log_message&)> log = {});

} // namespace longhaul
