// ssh-keyscan's command line and host lists, as OpenSSH 9.2's main() and
// do_host() read them: pure functions, so that the messages and exit
// statuses are unit-tested without a network.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// OpenSSH's KT_* bits, in its order: one connection per bit requested.
enum keyscan_type : unsigned {
    kt_dsa = 1u << 0,
    kt_rsa = 1u << 1,
    kt_ecdsa = 1u << 2,
    kt_ed25519 = 1u << 3,
    kt_ecdsa_sk = 1u << 5,
    kt_ed25519_sk = 1u << 6,
};
inline constexpr std::array<keyscan_type, 6> keyscan_types_in_order{kt_dsa,     kt_rsa,      kt_ecdsa,
                                                                    kt_ed25519, kt_ecdsa_sk, kt_ed25519_sk};
inline constexpr unsigned keyscan_default_types = kt_rsa | kt_ecdsa | kt_ed25519 | kt_ecdsa_sk | kt_ed25519_sk;

// The host key algorithms one connection offers for a type (keygrab_ssh2's
// lists). Names this build cannot verify (DSA, security keys) are offered
// all the same: a server without such a key refuses the exchange, as it
// does OpenSSH's, and one with it cannot be verified here, so nothing is
// printed for it either way.
std::string_view keyscan_host_key_algorithms(keyscan_type type, bool certificates) noexcept;

// The -t name of a key type as sshkey_type_from_name() takes it (full
// names exactly, short names in any case); nullopt for anything else,
// certificate names included.
std::optional<keyscan_type> keyscan_type_from_name(std::string_view name) noexcept;

struct keyscan_options {
    int family = 0; // AF_UNSPEC, AF_INET (-4), AF_INET6 (-6)
    bool certificates = false; // -c
    bool sshfp = false;        // -D
    bool hash = false;         // -H
    bool verbose = false;      // -v
    int sshfp_digest = 0;      // -O hashalg=: 0 both, 1 SHA-1, 2 SHA-256
    int port = 22;
    int timeout_s = 5;
    unsigned types = keyscan_default_types;
    // -f files in order ("" for standard input), then the host operands.
    std::vector<std::string> files;
    std::vector<std::string> hosts;
};

// A refused command line: what to print on stderr (each line ends with a
// newline; the usage text included where OpenSSH prints it) and the status.
struct keyscan_usage_error {
    std::string message;
    int status = 1;
};

std::string keyscan_usage_text();

struct keyscan_parse_result {
    std::optional<keyscan_options> options;
    keyscan_usage_error error; // when !options
};

// argv without the program name. Options stop at the first operand or
// "--" (OpenSSH's BSD getopt does not permute).
keyscan_parse_result parse_keyscan_args(const std::vector<std::string>& args);

// A line of a -f file with its comment ('#' onwards) and trailing blanks
// cut off; nullopt when nothing is left.
std::optional<std::string> clean_keyscan_line(std::string_view line);

// "addrlist namelist": the names to connect to (comma-separated; a later
// one only when the earlier ones do not even start a connect()) and the
// names to print (the whole remainder after one blank, or the address
// list when there is none). nullopt for a blank entry.
struct keyscan_target {
    std::string connect_names;
    std::string output_names;
};
std::optional<keyscan_target> split_keyscan_entry(std::string_view entry);

// An entry that is an address or a CIDR range ("10.0.0.0/30", "::1"):
// every address in it, first and last included. do_host() tries this
// first, and treats anything else (a prefix length out of range, host bits
// set) as "addrlist namelist", as addr_pton_cidr() refusing it does.
class cidr_range {
public:
    static std::optional<cidr_range> parse(std::string_view entry);
    // The next address as text, nullopt after the last one.
    std::optional<std::string> next();

private:
    int family_ = 0;
    std::array<std::uint8_t, 16> cur_{}, end_{};
    bool done_ = false;
};

} // namespace longhaul
