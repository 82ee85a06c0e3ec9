#include "common/errc.hpp"

#include <string>

namespace longhaul {

std::string_view to_string(errc e) noexcept
{
    switch (e) {
    case errc::ok: return "success";
    case errc::incomplete: return "incomplete message";
    case errc::malformed: return "malformed message";
    case errc::too_large: return "length exceeds limit";
    case errc::trailing_data: return "unexpected trailing data";
    case errc::invalid_argument: return "invalid argument";
    case errc::unsupported: return "not supported";
    case errc::no_matching_algorithm: return "no matching algorithm";
    case errc::mac_mismatch: return "message authentication code incorrect";
    case errc::bad_padding: return "invalid padding";
    case errc::bad_packet_length: return "bad packet length";
    case errc::protocol_error: return "protocol error";
    case errc::strict_kex_violation: return "strict key exchange violation";
    case errc::sequence_wrap: return "sequence number wrapped";
    case errc::signature_invalid: return "incorrect signature";
    case errc::host_key_rejected: return "host key verification failed";
    case errc::key_type_mismatch: return "key type does not match";
    case errc::invalid_format: return "invalid format";
    case errc::passphrase_required: return "passphrase required";
    case errc::wrong_passphrase: return "incorrect passphrase supplied to decrypt private key";
    case errc::crypto_error: return "error in libcrypto";
    case errc::compression_error: return "compression error";
    case errc::bad_version: return "invalid protocol version";
    case errc::peer_disconnected: return "disconnected by peer";
    case errc::connection_closed: return "connection closed";
    case errc::timeout: return "connection timed out";
    case errc::io_error: return "I/O error";
    case errc::bad_permissions: return "bad permissions";
    case errc::security_key_unsupported: return "security keys are not supported yet";
    case errc::key_length: return "Invalid key length";
    }
    return "unknown error";
}

namespace {
class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "longhaul"; }
    std::string message(int ev) const override { return std::string(to_string(static_cast<errc>(ev))); }
};
} // namespace

const std::error_category& longhaul_category() noexcept
{
    static const category instance;
    return instance;
}

std::error_code make_error_code(errc e) noexcept
{
    return {static_cast<int>(e), longhaul_category()};
}

} // namespace longhaul
