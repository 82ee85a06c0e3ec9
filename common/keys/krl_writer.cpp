#include "common/keys/krl_writer.hpp"

#include "common/wire.hpp"

#include <algorithm>
#include <limits>

namespace longhaul {

namespace {

// PROTOCOL.krl's section and certificate subsection types. In their own
// namespace: krl.cpp names the same constants, and unity builds put both
// files in one translation unit.
namespace krl_out {
constexpr std::uint8_t section_certificates = 1;
constexpr std::uint8_t section_explicit_key = 2;
constexpr std::uint8_t section_fingerprint_sha1 = 3;
constexpr std::uint8_t section_fingerprint_sha256 = 5;
constexpr std::uint8_t cert_serial_list = 0x20;
constexpr std::uint8_t cert_serial_range = 0x21;
constexpr std::uint8_t cert_serial_bitmap = 0x22;
constexpr std::uint8_t cert_key_id = 0x23;

// Wire sizes, for choosing between encodings.
constexpr std::uint64_t list_entry_bytes = 8;         // one uint64
constexpr std::uint64_t range_bytes = 1 + 4 + 8 + 8;  // type, length, lo, hi
constexpr std::uint64_t bitmap_overhead = 1 + 4 + 8 + 4 + 1; // type, length, offset, mpint length, sign byte
// Serials further apart than this are never put in one bitmap: the gap
// alone would cost more than a list entry and a new bitmap.
constexpr std::uint64_t bitmap_max_gap = 8 * (list_entry_bytes + bitmap_overhead);
// Well below the 16384-bit mpint limit of OpenSSH's reader (and ours).
constexpr std::uint64_t bitmap_max_bits = 8192;
} // namespace krl_out

template <class T>
std::vector<T> sorted_unique_copy(std::vector<T> v)
{
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

// Sorted, with overlapping and adjacent ranges joined.
std::vector<krl_serial_range> merged_ranges(std::vector<krl_serial_range> v)
{
    merge_serial_ranges(v);
    return v;
}

std::uint64_t plain_cost(const krl_serial_range& r) noexcept
{
    return r.lo == r.hi ? krl_out::list_entry_bytes : krl_out::range_bytes;
}

// The bitmap subsection body for ranges [first, last] (sorted, disjoint,
// spanning at most bitmap_max_bits): bit N revokes serial first->lo + N.
bytes bitmap_body(const krl_serial_range* first, const krl_serial_range* last)
{
    const std::uint64_t offset = first->lo;
    const std::uint64_t bits = last->hi - offset + 1;
    bytes magnitude((bits + 7) / 8, 0);
    for (const auto* r = first; r <= last; ++r)
        for (std::uint64_t s = r->lo - offset; s <= r->hi - offset; ++s)
            magnitude[magnitude.size() - 1 - s / 8] |= static_cast<std::uint8_t>(1u << (s % 8));
    bytes body;
    wire_writer(body).u64(offset).mpint(magnitude);
    return body;
}

// One CA's certificate section: its serials (merged ranges, as a list of
// single serials, range subsections, and bitmaps where a run of nearby
// serials is cheaper as one), the bitmaps it was loaded with, its key IDs.
void write_authority(wire_writer& out, const krl_certificate_authority& ca)
{
    const auto ranges = merged_ranges(ca.serial_ranges);
    std::vector<std::uint64_t> singles;
    std::vector<krl_serial_range> multi;
    std::vector<bytes> bitmaps;
    for (std::size_t i = 0; i < ranges.size();) {
        // The longest run from i that could share a bitmap, and whether
        // that bitmap is smaller than writing the run's ranges one by one.
        std::size_t j = i;
        std::uint64_t cost = plain_cost(ranges[i]);
        while (j + 1 < ranges.size() && ranges[j + 1].lo - ranges[j].hi <= krl_out::bitmap_max_gap &&
               ranges[j + 1].hi - ranges[i].lo < krl_out::bitmap_max_bits) {
            ++j;
            cost += plain_cost(ranges[j]);
        }
        if (j > i && krl_out::bitmap_overhead + (ranges[j].hi - ranges[i].lo + 8) / 8 < cost) {
            bitmaps.push_back(bitmap_body(&ranges[i], &ranges[j]));
            i = j + 1;
            continue;
        }
        if (ranges[i].lo == ranges[i].hi)
            singles.push_back(ranges[i].lo);
        else
            multi.push_back(ranges[i]);
        ++i;
    }
    for (const auto& b : ca.serial_bitmaps) {
        bytes body;
        wire_writer(body).u64(b.offset).mpint(b.bits);
        bitmaps.push_back(std::move(body));
    }

    const std::size_t section = out.begin_string();
    out.string(byte_span(ca.ca_key)).string(std::string_view{}); // CA key, reserved
    if (!singles.empty()) {
        out.u8(krl_out::cert_serial_list);
        const std::size_t sub = out.begin_string();
        for (std::uint64_t s : singles)
            out.u64(s);
        out.end_string(sub);
    }
    for (const auto& r : multi) {
        out.u8(krl_out::cert_serial_range);
        const std::size_t sub = out.begin_string();
        out.u64(r.lo).u64(r.hi);
        out.end_string(sub);
    }
    for (const auto& b : bitmaps)
        out.u8(krl_out::cert_serial_bitmap).string(byte_span(b));
    const auto ids = sorted_unique_copy(ca.key_ids);
    if (!ids.empty()) {
        out.u8(krl_out::cert_key_id);
        const std::size_t sub = out.begin_string();
        for (const auto& id : ids)
            out.string(id);
        out.end_string(sub);
    }
    out.end_string(section);
}

// A section of strings (keys or hashes), sorted and unique; none when empty.
template <class T>
void write_blobs(wire_writer& out, std::uint8_t type, const std::vector<T>& items)
{
    if (items.empty())
        return;
    out.u8(type);
    const std::size_t section = out.begin_string();
    for (const auto& item : sorted_unique_copy(items))
        out.string(byte_span(item.data(), item.size()));
    out.end_string(section);
}

} // namespace

krl_writer::krl_writer(krl existing) : krl_(std::move(existing)) {}

krl_certificate_authority& krl_writer::authority(byte_span ca)
{
    // CAs keep the order they were first named in, as in OpenSSH's lists.
    auto it = std::find_if(krl_.authorities.begin(), krl_.authorities.end(),
                           [&](const krl_certificate_authority& a) { return std::ranges::equal(a.ca_key, ca); });
    if (it != krl_.authorities.end())
        return *it;
    krl_.authorities.push_back({});
    krl_.authorities.back().ca_key = to_bytes(ca);
    return krl_.authorities.back();
}

result<void> krl_writer::add_serials(byte_span ca, std::uint64_t lo, std::uint64_t hi)
{
    if (lo == 0 || lo > hi)
        return errc::invalid_argument;
    auto& a = authority(ca);
    a.serial_ranges.push_back({lo, hi});
    // Keep memory proportional to what is revoked, not to how often: a
    // spec that repeats serials is merged now and then, not only at the end.
    if (a.serial_ranges.size() >= 1024 && (a.serial_ranges.size() & (a.serial_ranges.size() - 1)) == 0)
        a.serial_ranges = merged_ranges(std::move(a.serial_ranges));
    return {};
}

void krl_writer::add_key_id(byte_span ca, std::string key_id) { authority(ca).key_ids.push_back(std::move(key_id)); }

void krl_writer::add_explicit_key(byte_span blob) { krl_.keys.push_back(to_bytes(blob)); }

bytes krl_writer::to_blob() const
{
    bytes out;
    wire_writer w(out);
    w.raw(krl_magic)
        .u32(krl_format_version)
        .u64(krl_.version)
        .u64(krl_.generated_date)
        .u64(krl_.flags)
        .string(std::string_view{}) // reserved
        .string(krl_.comment);
    for (const auto& ca : krl_.authorities) {
        if (ca.serial_ranges.empty() && ca.serial_bitmaps.empty() && ca.key_ids.empty())
            continue;
        w.u8(krl_out::section_certificates);
        write_authority(w, ca);
    }
    write_blobs(w, krl_out::section_explicit_key, krl_.keys);
    write_blobs(w, krl_out::section_fingerprint_sha1, krl_.sha1s);
    write_blobs(w, krl_out::section_fingerprint_sha256, krl_.sha256s);
    return out;
}

} // namespace longhaul
