// Diffie-Hellman group exchange (RFC 4419, diffie-hellman-group-exchange-*):
// the moduli(5) file sshd draws its groups from, sshd's choice of a group for
// a client's (min, preferred, max) request, and the client's checks on the
// group a server sends.
#pragma once

#include "common/bytes.hpp"
#include "common/crypto/key_agreement.hpp"
#include "common/random.hpp"
#include "common/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// OpenSSH's DH_GRP_MIN and DH_GRP_MAX: the range a client asks for and the
// range sshd clamps requests to (RFC 4419 §3 recommends 1024..8192; OpenSSH
// raised the floor to 2048).
inline constexpr std::uint32_t gex_min_bits = 2048;
inline constexpr std::uint32_t gex_max_bits = 8192;

// moduli(5) field values.
inline constexpr unsigned moduli_type_safe = 2;            // (p-1)/2 is prime too
inline constexpr unsigned moduli_tests_composite = 0x01;   // found composite
inline constexpr unsigned moduli_tests_sieve = 0x02;       // sieve of Eratosthenes
inline constexpr unsigned moduli_tests_miller_rabin = 0x04;
// The largest modulus accepted: OpenSSH's limit on an mpint (SSHBUF_MAX_BIGNUM).
inline constexpr std::uint32_t moduli_max_bits = 16384;

// One usable line of a moduli file.
struct moduli_entry {
    std::uint32_t bits; // bit length of p (the file's size field plus one)
    dh_group group;
};

struct moduli_line_error {
    std::size_t line;        // 1-based
    std::string_view reason; // static text, e.g. "type is not 2 (safe prime)"
};

struct moduli_list {
    std::vector<moduli_entry> groups;
    std::vector<moduli_line_error> errors; // lines skipped, in file order
};

// Parses one line (without its newline; a trailing '\r' is ignored). Gives an
// empty optional for a blank or comment line. On a malformed or unusable line
// gives errc::invalid_format and, when `reason` is set, what was wrong.
//
// Accepted, like sshd: seven fields "timestamp type tests trials size generator
// modulus"; type 2 (safe prime); tests without the composite flag; trials
// >= 1; size + 1 == bits(modulus); generator > 1. Stricter than sshd: fields may
// be separated by runs of spaces or tabs but every field must be well formed
// in full (decimal digits, or hex for generator and modulus), tests must
// include Miller-Rabin (moduli(5): the screening pass that makes a line ready
// for use; ssh-keygen writes 6), the modulus must be odd and at most
// moduli_max_bits, and the generator below p-1.
result<std::optional<moduli_entry>> parse_moduli_line(std::string_view line, std::string_view* reason = nullptr);

// Parses a whole file's text. Like sshd, bad lines are skipped rather than
// failing the file; each is reported in `errors` with its line number for
// the caller to log (a caller wanting a strict check fails on any error).
moduli_list parse_moduli(std::string_view text);

// Reads and parses a moduli file (e.g. /etc/ssh/moduli). io_error when it
// cannot be read, too_large past 16 MiB. Meant for start-up: sshd reads the
// file once rather than per connection.
result<moduli_list> load_moduli_file(const std::string& path);

// sshd's handling of SSH_MSG_KEX_DH_GEX_REQUEST values: rejects min > max,
// preferred outside [min, max] and max < gex_min_bits (invalid_argument),
// then clamps all three into [gex_min_bits, gex_max_bits] for the choice. The
// exchange hash still covers the values as received.
struct gex_request {
    std::uint32_t min_bits;
    std::uint32_t preferred_bits;
    std::uint32_t max_bits;
};
result<gex_request> clamp_gex_request(std::uint32_t min_bits, std::uint32_t preferred_bits,
                                      std::uint32_t max_bits) noexcept;

struct gex_choice {
    dh_group group;
    bool fallback; // no group fitted: a built-in RFC 3526 group was used
};

// sshd's choose_dh: among the groups whose size lies in [min, max], the
// smallest size at or above `preferred`, or failing that the largest below
// it; one of the groups of that size at random. When none fits (or the list
// is empty: no moduli file) falls back to gex_fallback_group(max_bits).
// Unlike sshd, the answer does not depend on the order of the lines.
gex_choice choose_gex_group(std::span<const moduli_entry> groups, std::uint32_t min_bits,
                            std::uint32_t preferred_bits, std::uint32_t max_bits, random_source& rng);

// OpenSSH's dh_new_group_fallback: group 14 when max < 3072, group 16 when
// max < 6144, group 18 otherwise.
const dh_group& gex_fallback_group(std::uint32_t max_bits);

// OpenSSH's dh_estimate (NIST SP 800-57): the modulus size a client prefers
// for a symmetric strength of `security_bits` (8 * kex->dh_need).
std::uint32_t dh_estimate(std::uint32_t security_bits) noexcept;

// The client's checks on SSH_MSG_KEX_DH_GEX_GROUP: min_bits <= bits(p) <=
// max_bits (as OpenSSH checks), p odd, 1 < g < p-1. invalid_argument otherwise.
result<void> validate_gex_group(const dh_group& group, std::uint32_t min_bits, std::uint32_t max_bits) noexcept;

} // namespace longhaul
