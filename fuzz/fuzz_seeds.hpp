// Seed writing for the fuzz targets, the message-sequence encoding the
// protocol targets share (split_messages() in fuzz_common.hpp reads it),
// and check(): a broken invariant aborts, which libFuzzer reports.
//
// A target that calls maybe_write_seeds() from LLVMFuzzerInitialize writes
// its generated seeds when run as
//     LONGHAUL_FUZZ_WRITE_SEEDS=DIR build-fuzz/fuzz/<target>
// and exits; fuzz/make_corpora.sh does that for each target.
#pragma once

#include "common/bytes.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace longhaul::fuzz {

inline void check(bool ok)
{
    if (!ok)
        std::abort();
}

// A message sequence: each message is a 1-byte length (255: a 2-byte
// big-endian length follows) and then its bytes.
inline void append_message(bytes& out, byte_span m)
{
    if (m.size() < 255) {
        out.push_back(static_cast<std::uint8_t>(m.size()));
    } else {
        const std::size_t n = std::min<std::size_t>(m.size(), 0xffff);
        out.push_back(255);
        out.push_back(static_cast<std::uint8_t>(n >> 8));
        out.push_back(static_cast<std::uint8_t>(n));
        m = m.first(n);
    }
    out.insert(out.end(), m.begin(), m.end());
}

inline bytes join_messages(const std::vector<bytes>& ms)
{
    bytes out;
    for (const auto& m : ms)
        append_message(out, m);
    return out;
}

// ---------------------------------------------------------------- seeds

inline void write_seed(const std::string& dir, const std::string& name, byte_span data)
{
    const std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        std::perror(path.c_str());
        std::exit(1);
    }
    std::fwrite(data.data(), 1, data.size(), f);
    std::fclose(f);
}

inline bytes with_prefix(std::initializer_list<std::uint8_t> prefix, byte_span rest)
{
    bytes b(prefix);
    b.insert(b.end(), rest.begin(), rest.end());
    return b;
}

// From LLVMFuzzerInitialize: when LONGHAUL_FUZZ_WRITE_SEEDS names a
// directory, writes the target's seeds there and exits.
inline void maybe_write_seeds(const std::function<void(const std::string& dir)>& writer)
{
    const char* dir = std::getenv("LONGHAUL_FUZZ_WRITE_SEEDS");
    if (dir == nullptr || *dir == 0)
        return;
    writer(dir);
    std::exit(0);
}

} // namespace longhaul::fuzz
