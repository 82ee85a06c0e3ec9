// SSH private keys: signing, generation, and the file formats OpenSSH reads
// and writes (openssh-key-v1, plain or bcrypt-pbkdf + aes256-ctr encrypted;
// PEM and PKCS#8 through OpenSSL).
#pragma once

#include "common/keys/public_key.hpp"

#include <optional>

namespace longhaul {

class private_key {
public:
    static result<private_key> generate(key_type t, int bits = 0);

    key_type type() const noexcept { return public_.type(); }
    const public_key& public_part() const noexcept { return public_; }
    const std::string& comment() const noexcept { return comment_; }
    void set_comment(std::string c) { comment_ = std::move(c); }
    EVP_PKEY* evp() const noexcept { return pkey_.get(); }

    // An SSH signature blob (string sig_alg, string signature) over data.
    result<bytes> sign(std::string_view sig_alg, byte_span data) const;

private:
    private_key(public_key pub, std::shared_ptr<EVP_PKEY> pkey, std::string comment)
        : public_(std::move(pub)), pkey_(std::move(pkey)), comment_(std::move(comment)) {}
    friend class key_file_access;

    public_key public_;
    std::shared_ptr<EVP_PKEY> pkey_;
    std::string comment_;
};

} // namespace longhaul
