#include "ssh/agent/agent_lock.hpp"

#include "common/keys/bcrypt_pbkdf.hpp"

#include <openssl/crypto.h>

namespace longhaul::agent {

agent_lock::~agent_lock()
{
    cleanse(salt_.data(), salt_.size());
    cleanse(hash_.data(), hash_.size());
}

bool agent_lock::hash(byte_span passphrase, std::array<std::uint8_t, 32>& out) const
{
    return bool(bcrypt_pbkdf(passphrase, salt_, rounds, out));
}

bool agent_lock::lock(byte_span passphrase, random_source& random)
{
    if (locked_ || passphrase.empty())
        return false;
    random.fill(salt_);
    if (!hash(passphrase, hash_)) {
        cleanse(hash_.data(), hash_.size());
        return false;
    }
    locked_ = true;
    return true;
}

bool agent_lock::unlock(byte_span passphrase)
{
    if (!locked_ || passphrase.empty())
        return false;
    std::array<std::uint8_t, 32> candidate{};
    const bool hashed = hash(passphrase, candidate);
    const bool match = hashed && CRYPTO_memcmp(candidate.data(), hash_.data(), hash_.size()) == 0;
    cleanse(candidate.data(), candidate.size());
    if (!match) {
        if (failures_ < max_failures)
            ++failures_;
        return false;
    }
    locked_ = false;
    failures_ = 0;
    cleanse(hash_.data(), hash_.size());
    return true;
}

} // namespace longhaul::agent
