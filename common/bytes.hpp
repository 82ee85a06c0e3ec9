// Byte-level vocabulary: spans over unsigned bytes (what OpenSSL takes), an
// owning byte vector, and a buffer for secrets that wipes itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

using byte_span = std::span<const std::uint8_t>;
using mutable_byte_span = std::span<std::uint8_t>;
using bytes = std::vector<std::uint8_t>;

inline byte_span as_bytes(std::string_view s) noexcept
{
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

inline std::string_view as_string_view(byte_span b) noexcept
{
    return {reinterpret_cast<const char*>(b.data()), b.size()};
}

inline bytes to_bytes(byte_span b) { return bytes(b.begin(), b.end()); }

// Wipes memory in a way the compiler may not elide (OPENSSL_cleanse).
void cleanse(void* p, std::size_t n) noexcept;
inline void cleanse(mutable_byte_span s) noexcept { cleanse(s.data(), s.size()); }

// Compares two equal-length byte strings without data-dependent timing.
bool equal_constant_time(byte_span a, byte_span b) noexcept;

// A value wiped when it goes out of scope, on every return path: the secret
// temporaries of the KEMs (seeds, short vectors, decrypted messages) never
// outlive the call that made them.
template <class T>
struct wiped : T {
    wiped() : T{} {}
    wiped(const wiped&) = delete;
    wiped& operator=(const wiped&) = delete;
    ~wiped() { cleanse(static_cast<T*>(this), sizeof(T)); }
};

// Hides a value from the optimiser, so that mask arithmetic on a secret is
// not turned back into a branch.
template <class T>
inline T value_barrier(T v) noexcept
{
#if defined(__GNUC__) || defined(__clang__)
    __asm__("" : "+r"(v));
#endif
    return v;
}

// Fixed-size heap buffer for key material; wiped on destruction and on
// assignment. It never reallocates, so no stale copies are left behind.
class secret_bytes {
public:
    secret_bytes() = default;
    explicit secret_bytes(std::size_t n);
    explicit secret_bytes(byte_span b);
    secret_bytes(const secret_bytes& o);
    secret_bytes(secret_bytes&& o) noexcept;
    secret_bytes& operator=(const secret_bytes& o);
    secret_bytes& operator=(secret_bytes&& o) noexcept;
    ~secret_bytes();

    std::uint8_t* data() noexcept { return p_.get(); }
    const std::uint8_t* data() const noexcept { return p_.get(); }
    std::size_t size() const noexcept { return n_; }
    bool empty() const noexcept { return n_ == 0; }
    mutable_byte_span span() noexcept { return {p_.get(), n_}; }
    byte_span span() const noexcept { return {p_.get(), n_}; }
    operator byte_span() const noexcept { return span(); }
    void clear() noexcept;

private:
    std::unique_ptr<std::uint8_t[]> p_;
    std::size_t n_ = 0;
};

// The bytes after any leading zeros (big-endian magnitudes).
inline byte_span strip_leading_zeros(byte_span b) noexcept
{
    std::size_t i = 0;
    while (i < b.size() && b[i] == 0)
        ++i;
    return b.subspan(i);
}

// Lowercase hex, for logs and tests.
std::string to_hex(byte_span b);
// The value of one hex digit (either case); -1 for anything else.
int hex_digit_value(char c) noexcept;
// Parses hex (whitespace ignored); empty result on bad input.
bytes from_hex(std::string_view hex);

} // namespace longhaul
