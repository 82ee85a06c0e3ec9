// Hostbased authentication for the ssh client: the host's public keys and
// certificates read from /etc/ssh as OpenSSH's ssh reads them, and
// ssh-keysign (setuid, the only one that can read the private halves)
// run for each signature.
#include "ssh/detail/ssh_client.hpp"

#include "common/auth/client_certificates.hpp"
#include "common/auth/keysign_protocol.hpp"
#include "common/keys/key_file.hpp"
#include "common/keys/key_lines.hpp"
#include "ssh/keysign_runner.hpp"

#include <sys/stat.h>

namespace longhaul::detail {

namespace {

bool exists(const std::string& path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

// The public key of host key file `path`: from `path`.pub, else from the
// file itself when it can be read. A file that is missing is no news.
std::optional<public_key> load_host_public_key(const std::string& path, logger& log)
{
    const std::string pub = path + ".pub";
    if (exists(pub)) {
        auto line = load_public_key_file(pub);
        if (line)
            return line->key;
        log.error("load pubkey \"" + path + "\": " + std::string(to_string(line.error())));
        return std::nullopt;
    }
    if (!exists(path))
        return std::nullopt;
    auto text = read_key_file(path);
    auto key = text ? private_key_file_public_key(as_string_view(text->span())) : result<public_key>(text.error());
    if (!key) {
        log.error("load pubkey \"" + path + "\": " + std::string(to_string(key.error())));
        return std::nullopt;
    }
    return *key;
}

} // namespace

std::vector<client_host_key> ssh_client::hostbased_keys()
{
    // OpenSSH's slots: certificates 0-3, keys 4-7 (3 and 7 were DSA's).
    std::vector<client_host_key> keys;
    const int required_rsa = cfg_.required_rsa_size.value_or(1024);
    const auto usable = [&](const public_key& k, const std::string& path, const char* what) {
        if (!rsa_size_allowed(k, required_rsa)) {
            log_.error(std::string("load ") + what + " \"" + path + "\": " + std::string(to_string(errc::key_length)));
            return false;
        }
        return true;
    };
    int slot = 0;
    for (const char* path : hostbased_key_files) {
        auto cert = load_certificate_file(std::string(path) + "-cert");
        if (cert && usable(cert->key(), path, "cert")) {
            log_.debug2("hostbased key " + std::to_string(slot) + ": " + std::string(cert->type_name()) +
                        " cert from \"" + path + "\"");
            auto shared = std::make_shared<const certificate>(std::move(*cert));
            keys.push_back(client_host_key{path, shared->key(), shared});
        } else if (!cert && cert.error() != errc::io_error) {
            log_.error(std::string("load cert \"") + path + "\": " + std::string(to_string(cert.error())));
        }
        ++slot;
    }
    slot = 4;
    for (const char* path : hostbased_key_files) {
        if (auto key = load_host_public_key(path, log_); key && usable(*key, path, "pubkey")) {
            log_.debug2("hostbased key " + std::to_string(slot) + ": " + std::string(key->type_name()) +
                        " key from \"" + path + "\"");
            keys.push_back(client_host_key{path, std::move(*key), nullptr});
        }
        ++slot;
    }
    if (keys.empty())
        log_.debug("HostbasedAuthentication enabled but no local public host keys could be loaded.");
    return keys;
}

void ssh_client::sign_with_keysign(const client_auth_event& ev)
{
    auto sig = run_ssh_keysign(ssh_keysign_path(), stream_.fd, ev.data, log_);
    if (!sig) {
        layer_->client_auth_machine()->host_signature_failed();
        return;
    }
    layer_->client_auth_machine()->answer_host_signature(*sig);
}

} // namespace longhaul::detail
