// Seed writing for the fuzz targets, the message-sequence encoding the
// protocol targets share (join_messages() writes it, split_messages() reads it),
// and check(): a broken invariant aborts, which libFuzzer reports.
//
// A target that calls maybe_write_seeds() from LLVMFuzzerInitialize writes
// its generated seeds when run as
//     LONGHAUL_FUZZ_WRITE_SEEDS=DIR build-fuzz/fuzz/<target>
// and exits; fuzz/make_corpora.sh does that for each target.
#pragma once

#include "common/bytes.hpp"

#include <algorithm>
#include <cstddef>
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

// Reads what join_messages writes (at most `max_messages` of them).
inline std::vector<bytes> split_messages(byte_span in, std::size_t max_messages = 128)
{
    std::vector<bytes> out;
    std::size_t pos = 0;
    while (pos < in.size() && out.size() < max_messages) {
        std::size_t n = in[pos++];
        if (n == 255 && pos + 2 <= in.size()) {
            n = std::size_t(in[pos]) << 8 | in[pos + 1];
            pos += 2;
        }
        n = std::min(n, in.size() - pos);
        out.emplace_back(in.begin() + static_cast<std::ptrdiff_t>(pos),
                         in.begin() + static_cast<std::ptrdiff_t>(pos + n));
        pos += n;
    }
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
