// Fuzzes ssh-keygen -i's RFC 4716 reader (read_rfc4716_blob): headers,
// continuation lines, boundaries and base64 in any mix; every blob it
// returns is read as a key or certificate, and a key's SSHFP records are
// made (-r). Nothing may crash or read out of bounds.
// Seeds: RFC 4716 files written by ssh-keygen -e for the tests/data keys.
#include "common/keys/certificate.hpp"
#include "ssh/keygen/keygen_formats.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

using namespace longhaul;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto blob = read_rfc4716_blob(text);
    if (!blob)
        return 0;
    if (auto key = public_key::from_blob(*blob))
        (void)sshfp_records(*key, "fuzz.example", (size & 1) != 0);
    else
        (void)certificate::from_blob(*blob);
    return 0;
}
