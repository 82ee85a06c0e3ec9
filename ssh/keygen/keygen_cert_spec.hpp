// What ssh-keygen -s takes on its command line, parsed as OpenSSH 9.2's
// ssh-keygen parses it: the validity interval (-V), the serial (-z), the
// principals (-n), the certificate options (-O) and the CA's signature
// algorithm (-t). Each parser ends the program with OpenSSH's message
// (keygen_exit, status 255) on bad input, so the tests can check the words.
#pragma once

#include "common/text_parse.hpp" // parse_absolute_time

#include "common/keys/certificate.hpp"

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::keygen {

// OpenSSH's convtime(): "90", "1h30m", "2w" (s m h d w, either case); -1
// for junk or a total over INT_MAX.
long long convtime(std::string_view s);

struct cert_validity {
    std::uint64_t from = 0;          // valid after; 0: "always"
    std::uint64_t to = UINT64_MAX;   // valid before; all ones: "forever"
};

// -V: "+52w" (from a minute ago, to now + 52 weeks), or "from:to" where from
// is [+-]interval, an absolute time, 0x<hex> or "always", and to is the
// same with "forever". `now` is the time -V was read.
cert_validity parse_cert_validity(std::string_view spec, std::time_t now);

// sshkey_format_cert_validity: "forever", "after X", "before Y",
// "from X to Y" (local time).
std::string format_cert_validity(std::uint64_t from, std::uint64_t to);

// -z: decimal, or "+N" to count up from N for each key signed.
struct cert_serial {
    std::uint64_t first = 0;
    bool auto_increment = false;
};
cert_serial parse_cert_serial(std::string_view s);

// -n: the comma-separated principals (none for an empty optional).
std::vector<std::string> split_principals(const std::optional<std::string>& list);

// -O for certificates, applied in command line order after the other
// flags (as OpenSSH applies them): the permit-* flags start as OpenSSH's
// default set for a user certificate and empty for a host one (-h).
class cert_option_set {
public:
    explicit cert_option_set(bool host);
    void add(std::string_view option);
    // The critical options and extensions to sign, each list sorted by name.
    std::vector<certificate_option> critical_options() const;
    std::vector<certificate_option> extensions() const;

private:
    struct custom {
        std::string name;
        std::optional<std::string> value;
        bool critical;
    };
    unsigned flags_;
    std::optional<std::string> force_command_;
    std::optional<std::string> source_address_;
    std::vector<custom> custom_;
};

// OpenSSH's addr_match_cidr_list(NULL, list) for source-address: the error
// lines it logs (empty when the list is valid).
std::vector<std::string> cidr_list_errors(std::string_view list);

// -t with -s: the signature algorithm to sign with for this CA key (empty
// name: the CA's default). Refuses a name that does not match the CA's type
// ("CA key type ... doesn't match specified ...") and returns, for a
// matching name the CA cannot sign with, the reason certification fails
// ("invalid argument", "signature algorithm not supported") in `failure`.
struct cert_signature_choice {
    std::string algorithm;
    std::optional<std::string> failure;
};
cert_signature_choice choose_cert_signature(key_type ca, const std::optional<std::string>& name);

} // namespace longhaul::keygen
