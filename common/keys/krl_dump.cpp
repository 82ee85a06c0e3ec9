// describe_krl(): the listing of `ssh-keygen -Q -l` (OpenSSH's krl_dump).
#include "common/keys/krl.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/base64.hpp"
#include "common/wire.hpp"

#include <algorithm>
#include <ctime>
#include <limits>

namespace longhaul {

namespace {

// OpenSSH's format_timestamp(): local time, "<INVALID>" when unrepresentable.
std::string timestamp(std::uint64_t t)
{
    if (t > static_cast<std::uint64_t>(std::numeric_limits<std::time_t>::max()))
        return "<INVALID>";
    const std::time_t tt = static_cast<std::time_t>(t);
    std::tm tm{};
    char buf[64];
    if (localtime_r(&tt, &tm) == nullptr || std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%S", &tm) == 0)
        return "<INVALID>";
    return buf;
}

// Text from the file, with anything but printable ASCII as \ooo, so that a
// comment or key ID cannot break the listing's lines or the terminal.
std::string printable_text(std::string_view s)
{
    static constexpr char digits[] = "01234567";
    std::string out;
    for (unsigned char c : s) {
        if (c >= 0x20 && c < 0x7f) {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('\\');
            out.push_back(digits[(c >> 6) & 7]);
            out.push_back(digits[(c >> 3) & 7]);
            out.push_back(digits[c & 7]);
        }
    }
    return out;
}

std::string sha256_fingerprint(byte_span blob)
{
    return "SHA256:" + base64_encode(digest(hash_alg::sha256, blob), false);
}

// The key type name a blob starts with.
std::string blob_type(byte_span blob)
{
    wire_reader r(blob);
    const auto name = r.text(64);
    return r.ok() ? printable_text(name) : std::string("unknown");
}

// Every revoked serial of a CA as merged ranges (bitmaps expanded), the
// order OpenSSH's serial tree lists them in.
std::vector<krl_serial_range> all_serials(const krl_certificate_authority& ca)
{
    std::vector<krl_serial_range> v = ca.serial_ranges;
    for (const auto& b : ca.serial_bitmaps) {
        const std::size_t nbits = 8 * b.bits.size();
        for (std::size_t i = 0; i < nbits; ++i) {
            const std::size_t byte = b.bits.size() - 1 - i / 8;
            if (((b.bits[byte] >> (i % 8)) & 1) == 0)
                continue;
            const std::uint64_t serial = b.offset + i;
            if (!v.empty() && v.back().hi + 1 == serial && v.back().hi != std::numeric_limits<std::uint64_t>::max())
                v.back().hi = serial;
            else
                v.push_back({serial, serial});
        }
    }
    merge_serial_ranges(v);
    return v;
}

} // namespace

std::string describe_krl(const krl& k)
{
    std::string out = "# KRL version " + std::to_string(k.version) + "\n";
    out += "# Generated at " + timestamp(k.generated_date) + "\n";
    if (!k.comment.empty())
        out += "# Comment: " + printable_text(k.comment) + "\n";
    out += "\n";
    for (const auto& blob : k.keys)
        out += "hash: " + sha256_fingerprint(blob) + " # " + blob_type(blob) + "\n";
    for (const auto& h : k.sha256s)
        out += "hash: SHA256:" + to_hex(h) + "\n";
    // There is no KRL specification keyword for raw SHA1 hashes, hence the comment.
    for (const auto& h : k.sha1s)
        out += "# hash SHA1:" + to_hex(h) + "\n";
    for (const auto& ca : k.authorities) {
        out += "\n";
        if (ca.ca_key.empty())
            out += "# Wildcard CA\n";
        else
            out += "# CA key " + blob_type(ca.ca_key) + " " + sha256_fingerprint(ca.ca_key) + "\n";
        for (const auto& r : all_serials(ca)) {
            out += "serial: " + std::to_string(r.lo);
            if (r.hi != r.lo)
                out += "-" + std::to_string(r.hi);
            out += "\n";
        }
        for (const auto& id : ca.key_ids)
            out += "id: " + printable_text(id) + "\n";
    }
    return out;
}

} // namespace longhaul
