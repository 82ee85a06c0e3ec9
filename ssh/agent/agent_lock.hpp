// ssh-agent's lock (ssh-add -x / -X). Only a salted bcrypt_pbkdf hash of
// the passphrase is kept, as OpenSSH keeps one, and unlocking compares
// hashes in constant time. Failed unlocks make the next answer wait
// longer (OpenSSH: 0.1 s more per failure, up to 10 s).
#pragma once

#include "common/bytes.hpp"
#include "common/random.hpp"

#include <array>
#include <chrono>
#include <cstdint>

namespace longhaul::agent {

class agent_lock {
public:
    // OpenSSH's LOCK_ROUNDS: one round, the passphrase is only held
    // against a running agent's own memory.
    static constexpr std::uint32_t rounds = 1;
    static constexpr unsigned max_failures = 100;
    static constexpr std::chrono::milliseconds delay_per_failure{100};

    ~agent_lock();

    bool locked() const noexcept { return locked_; }
    // False when already locked, on an empty passphrase (OpenSSH refuses
    // it) or when hashing fails.
    bool lock(byte_span passphrase, random_source& random);
    // True when locked and the passphrase matches; a mismatch counts a
    // failure, which delay() then reflects.
    bool unlock(byte_span passphrase);
    // How long to hold the answer to the last failed unlock.
    std::chrono::milliseconds delay() const noexcept { return delay_per_failure * failures_; }

private:
    bool hash(byte_span passphrase, std::array<std::uint8_t, 32>& out) const;

    bool locked_ = false;
    unsigned failures_ = 0;
    std::array<std::uint8_t, 16> salt_{};
    std::array<std::uint8_t, 32> hash_{};
};

} // namespace longhaul::agent
