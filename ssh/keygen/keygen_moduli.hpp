// ssh-keygen -M generate / -M screen (moduli(5) for DH group exchange), the
// pure pieces: moduli lines, -O options, the candidate sieve, the generator
// choice and the screening of one line. OpenSSH 9.2's moduli.c is the model:
// its sieve (q and p = 2q+1 struck out by every odd prime below 2^32), its
// output and its messages, so that either program screens the other's files.
#pragma once

#include "ssh/keygen/keygen_commands.hpp"

#include <openssl/bn.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::keygen {

// moduli(5) field values.
inline constexpr std::uint32_t moduli_type_safe = 2;
inline constexpr std::uint32_t moduli_type_sophie_germain = 4;
inline constexpr std::uint32_t moduli_tests_composite = 0x01;
inline constexpr std::uint32_t moduli_tests_sieve = 0x02;
inline constexpr std::uint32_t moduli_tests_miller_rabin = 0x04;

// Limits as OpenSSH's: bits 512..65536, memory= 8..127 MB, prime-tests >= 4.
inline constexpr std::uint32_t moduli_min_bits = 512;
inline constexpr std::uint32_t moduli_max_bits = 1u << 16;
inline constexpr std::uint32_t moduli_default_bits = 3072;
inline constexpr std::uint32_t moduli_min_memory_mb = 8;
inline constexpr std::uint32_t moduli_max_memory_mb = 127;
inline constexpr std::uint32_t moduli_min_trials = 4;
inline constexpr std::uint32_t moduli_default_trials = 100;

struct bn_deleter {
    void operator()(BIGNUM* b) const noexcept { BN_free(b); }
};
using bn_ptr = std::unique_ptr<BIGNUM, bn_deleter>;

bn_ptr bn_from_hex(const std::string& hex); // null when not hex (BN_hex2bn)
std::string bn_to_hex(const BIGNUM* b);     // upper case, as BN_print_fp

// One line of a moduli file.
struct moduli_line {
    std::string timestamp; // YYYYMMDDHHMMSS, UTC
    std::uint32_t type = 0;
    std::uint32_t tests = 0;
    std::uint32_t trials = 0;
    std::uint32_t size = 0; // the modulus's bit count less one
    std::uint32_t generator = 0;
    std::string modulus; // hex
};

std::string moduli_timestamp(std::time_t t);
// The line OpenSSH's qfileout() writes, "\n" included.
std::string format_moduli_line(const moduli_line& m);
// Read as OpenSSH reads a line: the 14-character timestamp skipped, the
// numbers with strtoul; nullopt for comments ('#', '!') and short lines.
std::optional<moduli_line> parse_moduli_line(const std::string& line);

// -O options; a bad one throws keygen_exit(255, OpenSSH's message).
struct moduli_generate_options {
    std::uint32_t memory_mb = 0; // 0: what the bit size needs
    std::uint32_t bits = 0;      // 0: moduli_default_bits
    std::optional<std::string> start; // hex
};
struct moduli_screen_options {
    unsigned long lines = 0; // 0: to the end
    unsigned long start_line = 0;
    std::optional<std::string> checkpoint;
    std::uint32_t generator = 0; // 0: any
    std::uint32_t trials = 0;    // 0: moduli_default_trials
};
moduli_generate_options parse_moduli_generate_options(const std::vector<std::string>& opts);
moduli_screen_options parse_moduli_screen_options(const std::vector<std::string>& opts);

// The generator OpenSSH picks for a safe prime p: 2 when p mod 24 is 11,
// 5 when p mod 10 is 3 or 7, else 0 (none usable).
std::uint32_t moduli_generator_for(const BIGNUM* p);

// The sieve over q = start + 2j, j < bits_: j survives when no odd prime up
// to the last one tried divides q or 2q+1. Primes are tried as OpenSSH
// does, up to below small_limit (2^32 for real runs; smaller in tests).
class moduli_sieve {
public:
    // start must be odd; bits is the window's size in candidates. Throws
    // std::bad_alloc when the window cannot be had.
    moduli_sieve(const BIGNUM* start, std::uint32_t bits);
    void run(std::uint64_t small_limit = 0xffffffffULL);
    bool survives(std::uint32_t j) const { return !((large_[j >> 5] >> (j & 31)) & 1u); }
    std::uint32_t size() const { return bits_; }
    std::uint32_t tries() const { return tries_; } // odd primes tried
    std::uint32_t largest_prime_tried() const { return largest_; }

private:
    void strike(std::uint32_t s);
    void mark(std::uint64_t j) { large_[j >> 5] |= 1u << (j & 31); }

    struct free_deleter {
        void operator()(std::uint32_t* p) const noexcept { std::free(p); }
    };
    const BIGNUM* base_;
    std::uint32_t bits_;
    // calloc'd, as OpenSSH's: untouched pages of a large window cost nothing.
    std::unique_ptr<std::uint32_t[], free_deleter> large_;
    std::uint32_t tries_ = 0;
    std::uint32_t largest_ = 0;
};

// The window's size for a bit size and memory= as OpenSSH sizes it, in
// 32-bit words; notes says why it changed ("Increased memory: ..."), if so.
std::uint32_t moduli_sieve_words(std::uint32_t bits, std::uint32_t memory_mb, std::string& notes);

// Screening of one parsed line with trials Miller-Rabin rounds: the output
// line (timestamp left empty) or nullopt, with why in reason (OpenSSH's
// debug text).
struct moduli_screen_result {
    std::optional<moduli_line> safe;
    bool possible = false; // counted among the candidates
    std::string reason;
    bool verbose_reason = false; // debug1 rather than debug2
};
moduli_screen_result screen_moduli_line(const moduli_line& in, std::uint32_t trials, std::uint32_t generator_wanted);

} // namespace longhaul::keygen

namespace longhaul {

// -M generate [-O bits= memory= start=] out_file: candidate lines.
int keygen_moduli_generate(const keygen_options& o, const std::string& out_file,
                           const std::vector<std::string>& opts);
// -M screen [-f in] [-O lines= start-line= checkpoint= generator=
// prime-tests=] out_file: the safe primes among the candidates, appended.
int keygen_moduli_screen(const keygen_options& o, const std::string& out_file, const std::vector<std::string>& opts);

} // namespace longhaul
