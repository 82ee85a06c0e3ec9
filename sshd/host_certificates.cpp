#include "sshd/host_certificates.hpp"

#include "common/file_read.hpp"
#include "common/keys/key_lines.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace longhaul {

namespace {

// A certificate file is one line; anything this large is not one.
constexpr std::size_t max_certificate_file = 64 * 1024;

// OpenSSH's key type numbers (sshkey.h), which its debug line prints.
int openssh_cert_type_number(key_type t) noexcept
{
    switch (t) {
    case key_type::rsa: return 4; // KEY_RSA_CERT
    case key_type::ed25519: return 7; // KEY_ED25519_CERT
    case key_type::sk_ecdsa_p256: return 11; // KEY_ECDSA_SK_CERT
    case key_type::sk_ed25519: return 13;    // KEY_ED25519_SK_CERT
    default: return 6; // KEY_ECDSA_CERT
    }
}

// What sshkey_type() says for a certificate: "ED25519-CERT", "ECDSA-CERT", "RSA-CERT".
std::string cert_type_label(key_type t) { return std::string(key_type_short_name(t)) + "-CERT"; }

} // namespace

result<certificate> parse_certificate_text(std::string_view text)
{
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (is_blank_or_comment(line))
            continue;
        // As sshkey_try_load_public: the first line that holds a key.
        auto cert = parse_certificate_line(line);
        if (cert)
            return cert;
        if (cert.error() == errc::unsupported && parse_public_key_line(line))
            return errc::unsupported; // a plain key
    }
    return errc::invalid_format;
}

std::vector<certificate> load_host_certificates(const std::vector<std::string>& files,
                                                const std::vector<std::shared_ptr<const private_key>>& keys,
                                                const std::function<void(log_level, std::string_view)>& log,
                                                const std::vector<public_key>& agent_keys)
{
    auto say = [&](log_level level, const std::string& text) {
        if (log)
            log(level, text);
    };
    std::vector<certificate> out;
    for (const auto& path : files) {
        // OpenSSH's sshkey_load_public: the file, else the file with ".pub"
        // appended, else "No such file or directory" whatever went wrong.
        result<certificate> cert = errc::invalid_format;
        for (const std::string& candidate : {path, path + ".pub"}) {
            std::string text;
            const int fd = ::open(candidate.c_str(), O_RDONLY | O_CLOEXEC);
            const int err = fd < 0 ? errno : read_to_end(fd, max_certificate_file, text);
            if (fd >= 0)
                ::close(fd);
            cert = err != 0 ? result<certificate>(errc::io_error) : parse_certificate_text(text);
            if (cert || cert.error() == errc::unsupported)
                break;
        }
        if (!cert && cert.error() == errc::unsupported) {
            say(log_level::error, "Certificate file is not a certificate: " + path);
            continue;
        }
        if (!cert) {
            say(log_level::error, "Could not load host certificate \"" + path + "\": " + std::strerror(ENOENT));
            continue;
        }
        const std::size_t none = keys.size() + agent_keys.size();
        std::size_t index = none;
        for (std::size_t i = 0; i < keys.size() && index == none; ++i)
            if (keys[i] && keys[i]->public_part() == cert->key())
                index = i;
        for (std::size_t i = 0; i < agent_keys.size() && index == none; ++i)
            if (agent_keys[i] == cert->key())
                index = keys.size() + i;
        if (index == none) {
            say(log_level::error, "No matching private key for certificate: " + path);
            continue;
        }
        say(log_level::debug1, "host certificate: #" + std::to_string(index) + " type " +
                                   std::to_string(openssh_cert_type_number(cert->key().type())) + " " +
                                   cert_type_label(cert->key().type()));
        // One certificate per key, the last one configured (OpenSSH stores
        // them at the key's index).
        for (auto it = out.begin(); it != out.end(); ++it)
            if (it->key() == cert->key()) {
                out.erase(it);
                break;
            }
        out.push_back(std::move(*cert));
    }
    return out;
}

} // namespace longhaul
