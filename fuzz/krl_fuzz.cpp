// Fuzzes revoked key files (RevokedKeys, RevokedHostKeys, ssh-keygen -Q):
// KRLs (PROTOCOL.krl) and public key lists, through parse_revocation_list,
// the revocation check and the ssh-keygen -Q -l listing; every KRL that
// parses is rewritten by krl_writer (ssh-keygen -k -u's path) and must
// parse again with the same contents.
//
// The first input byte picks a mode, the rest is the input:
//   even  the whole file, as sshd would read it (KRL or key list)
//   odd   KRL sections only: a valid KRL header is put in front, so that
//         every execution reaches the section parsers
// Seeds: tests/data/keys/krl/*.krl with a 0 byte in front, the same with
// their header (magic through comment) replaced by a 1 byte, and the *.pub
// files of tests/data/keys with a 0 byte in front.
#include "common/keys/krl.hpp"
#include "common/keys/krl_writer.hpp"
#include "common/keys/revocation.hpp"
#include "common/wire.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace longhaul;

namespace {

void check(bool ok)
{
    if (!ok)
        std::abort();
}

template <class T>
bool sorted_unique(const std::vector<T>& v)
{
    return std::adjacent_find(v.begin(), v.end(), [](const T& a, const T& b) { return !(a < b); }) == v.end();
}

// ssh-keygen -k -u: parse, then write again. The rewrite may encode
// serials differently (lists, ranges, bitmaps) but revokes the same ones,
// checked at the edges of every range and bitmap (the first few hundred).
void check_rewrite(const krl& k)
{
    auto again = parse_krl(krl_writer(k).to_blob());
    check(again.has_value());
    check(again->version == k.version && again->generated_date == k.generated_date && again->flags == k.flags &&
          again->comment == k.comment);
    check(again->keys == k.keys && again->sha1s == k.sha1s && again->sha256s == k.sha256s);
    // A CA with nothing revoked is not written (and never parsed as one).
    std::size_t i = 0;
    for (const auto& ca : k.authorities) {
        if (ca.serial_ranges.empty() && ca.serial_bitmaps.empty() && ca.key_ids.empty())
            continue;
        check(i < again->authorities.size());
        const auto& b = again->authorities[i++];
        check(b.ca_key == ca.ca_key && b.key_ids == ca.key_ids);
        std::size_t budget = 512;
        const auto same = [&](std::uint64_t s) { check(ca.serial_revoked(s) == b.serial_revoked(s)); };
        for (const auto* from : {&ca, &b}) {
            for (const auto& r : from->serial_ranges) {
                if (budget == 0)
                    break;
                --budget;
                same(r.lo - 1);
                same(r.lo);
                same(r.hi);
                same(r.hi + 1);
            }
            for (const auto& m : from->serial_bitmaps) {
                if (budget == 0)
                    break;
                --budget;
                same(m.offset);
                same(m.offset + 8 * m.bits.size() - 1);
                same(m.offset + 8 * m.bits.size());
            }
        }
    }
    check(i == again->authorities.size());
}

void check_list(const revocation_list& list)
{
    const krl& k = list.contents();
    check(sorted_unique(k.keys) && sorted_unique(k.sha1s) && sorted_unique(k.sha256s));
    // Every listed key that is a key Longhaul reads is revoked.
    for (const auto& blob : k.keys)
        if (auto key = public_key::from_blob(blob); key && key->blob() == blob)
            check(list.revoked(*key));
    for (const auto& ca : k.authorities) {
        check(sorted_unique(ca.key_ids));
        for (std::size_t i = 0; i < ca.serial_ranges.size(); ++i) {
            const auto& r = ca.serial_ranges[i];
            check(r.lo >= 1 && r.lo <= r.hi);
            if (i > 0)
                check(ca.serial_ranges[i - 1].hi < r.lo - 1); // merged: neither overlapping nor adjacent
            check(ca.serial_revoked(r.lo) && ca.serial_revoked(r.hi));
        }
        check(!ca.serial_revoked(0));
        for (const auto& b : ca.serial_bitmaps)
            check(!b.bits.empty() && b.bits[0] != 0);
    }
    if (list.kind() == revocation_list::format::krl && k.authorities.size() < 4) {
        // The listing expands bitmaps; bounded by the mpint size (16384 bits each).
        const std::string text = describe_krl(k);
        check(text.rfind("# KRL version ", 0) == 0 && text.back() == '\n');
    }
    if (list.kind() == revocation_list::format::krl)
        check_rewrite(k);
    else
        check(k.authorities.empty());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    const byte_span rest(data + 1, size - 1);
    if ((data[0] & 1) == 0) {
        if (auto list = parse_revocation_list(rest))
            check_list(*list);
        return 0;
    }
    bytes file;
    wire_writer(file).raw(krl_magic).u32(krl_format_version).u64(1).u64(2).u64(0).string("").string("").raw(rest);
    auto list = parse_revocation_list(file);
    if (list) {
        check(list->kind() == revocation_list::format::krl);
        check_list(*list);
    }
    // The same sections behind a bad magic or format version are refused.
    file[7] = 1;
    check(!parse_krl(file).has_value());
    return 0;
}
