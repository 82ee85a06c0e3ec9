#include "common/bytes.hpp"

#include <openssl/crypto.h>

#include <cstring>

namespace longhaul {

void cleanse(void* p, std::size_t n) noexcept
{
    if (p != nullptr && n != 0)
        OPENSSL_cleanse(p, n);
}

bool equal_constant_time(byte_span a, byte_span b) noexcept
{
    if (a.size() != b.size())
        return false;
    return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

secret_bytes::secret_bytes(std::size_t n) : p_(n ? new std::uint8_t[n]() : nullptr), n_(n) {}

secret_bytes::secret_bytes(byte_span b) : secret_bytes(b.size())
{
    if (!b.empty())
        std::memcpy(p_.get(), b.data(), b.size());
}

secret_bytes::secret_bytes(const secret_bytes& o) : secret_bytes(o.span()) {}

secret_bytes::secret_bytes(secret_bytes&& o) noexcept : p_(std::move(o.p_)), n_(o.n_) { o.n_ = 0; }

secret_bytes& secret_bytes::operator=(const secret_bytes& o)
{
    if (this != &o) {
        secret_bytes copy(o);
        *this = std::move(copy);
    }
    return *this;
}

secret_bytes& secret_bytes::operator=(secret_bytes&& o) noexcept
{
    if (this != &o) {
        clear();
        p_ = std::move(o.p_);
        n_ = o.n_;
        o.n_ = 0;
    }
    return *this;
}

secret_bytes::~secret_bytes() { clear(); }

void secret_bytes::clear() noexcept
{
    cleanse(p_.get(), n_);
    p_.reset();
    n_ = 0;
}

std::string to_hex(byte_span b)
{
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(b.size() * 2);
    for (auto c : b) {
        out.push_back(digits[c >> 4]);
        out.push_back(digits[c & 15]);
    }
    return out;
}

int hex_digit_value(char c) noexcept
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bytes from_hex(std::string_view hex)
{
    bytes out;
    int hi = -1;
    for (char c : hex) {
        if (c == ' ' || c == '\n' || c == '\t' || c == ':')
            continue;
        const int v = hex_digit_value(c);
        if (v < 0)
            return {};
        if (hi < 0) {
            hi = v;
        } else {
            out.push_back(static_cast<std::uint8_t>(hi << 4 | v));
            hi = -1;
        }
    }
    if (hi >= 0)
        return {};
    return out;
}

} // namespace longhaul
