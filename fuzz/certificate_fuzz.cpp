// Fuzzes OpenSSH certificate blobs (common/keys/certificate.hpp): the
// parser, the CA signature check and the authority checks a server and a
// client make, on whatever parses.
//
// The input is a certificate blob. Seeds: the certificates of
// tests/data/certs (fuzz/make_corpora.sh decodes their .pub lines).
#include "common/keys/certificate.hpp"

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

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const byte_span blob(data, size);
    auto cert = certificate::from_blob(blob);
    if (!cert)
        return 0;
    // What parsed is the input, and parses again to the same fields.
    check(cert->blob() == to_bytes(blob));
    auto again = certificate::from_blob(cert->blob());
    check(again.has_value() && again->fields().principals == cert->fields().principals &&
          again->fields().critical_options == cert->fields().critical_options &&
          again->fields().extensions == cert->fields().extensions && again->key() == cert->key() &&
          again->signature_key() == cert->signature_key());
    check(cert->principals().size() <= max_certificate_principals);
    (void)cert->verify_signature();
    (void)cert->verify_signature({"ssh-rsa", "ssh-ed25519"});
    for (const bool host : {false, true})
        (void)check_authority(*cert, host, !host, 1893456000, "alice");
    (void)unknown_critical_option(*cert);
    (void)cert->critical_option("force-command");
    (void)cert->critical_option("source-address");
    (void)certificate_time(cert->fields().valid_after, true);
    (void)certificate_time(cert->fields().valid_before, false);
    return 0;
}
