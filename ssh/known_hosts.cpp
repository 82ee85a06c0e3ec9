#include "ssh/known_hosts.hpp"

#include "common/transport/host_key_algorithms.hpp"

#include "common/file_read.hpp"
#include "common/crypto/hash.hpp"
#include "common/keys/base64.hpp"
#include "common/match.hpp"
#include "common/text_parse.hpp"

#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace longhaul {

std::string order_host_key_algorithms(std::string_view algorithms, const known_host_keys& known)
{
    std::vector<std::string_view> algs;
    for (std::size_t start = 0; start <= algorithms.size();) {
        const auto comma = algorithms.find(',', start);
        const auto a = algorithms.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        if (a.empty())
            break;
        algs.push_back(a);
        if (comma == std::string_view::npos)
            break;
        start = comma + 1;
    }
    // A certificate algorithm counts as its plain key type here (ssh falls
    // back from a certificate to its key when no CA vouches for it).
    auto known_type = [&](std::string_view alg) {
        auto t = host_key_type_for_algorithm(alg);
        return t && known.find_type(*t) != nullptr;
    };
    if (algs.empty() || known_type(algs.front()))
        return std::string(algorithms);
    // Any @cert-authority line for the host puts every certificate
    // algorithm first, as OpenSSH's order_hostkeyalgs does.
    const bool have_ca = known.has_cert_authority();
    std::string first, last;
    for (auto a : algs) {
        std::string& to = known_type(a) || (have_ca && is_certificate_algorithm(a)) ? first : last;
        if (!to.empty())
            to.push_back(',');
        to.append(a);
    }
    if (first.empty())
        return last;
    if (last.empty())
        return first;
    return first + "," + last;
}

std::string key_fingerprint_text(const public_key& key, key_fingerprint_hash hash)
{
    switch (hash) {
    case key_fingerprint_hash::md5: return key.fingerprint_md5();
    case key_fingerprint_hash::sha256: return key.fingerprint_sha256();
    case key_fingerprint_hash::sha1: return "SHA1:" + base64_encode(digest(hash_alg::sha1, key.blob()), false);
    case key_fingerprint_hash::sha384: return "SHA384:" + base64_encode(digest(hash_alg::sha384, key.blob()), false);
    case key_fingerprint_hash::sha512: return "SHA512:" + base64_encode(digest(hash_alg::sha512, key.blob()), false);
    }
    return key.fingerprint_sha256();
}

bool add_known_host(const std::string& path, std::string_view names, const public_key& key, bool hash,
                    random_source& rng, std::string_view ssh_dir, const log_sink& log)
{
    // Create ~/.ssh when the file goes straight into it.
    const auto slash = path.rfind('/');
    if (slash != std::string::npos && !ssh_dir.empty() && std::string_view(path).substr(0, slash) == ssh_dir) {
        const std::string dir(ssh_dir);
        struct stat st {};
        if (stat(dir.c_str(), &st) != 0) {
            if (errno != ENOENT) {
                if (log)
                    log(log_level::error, "Could not stat " + dir + ": " + std::strerror(errno));
            } else if (mkdir(dir.c_str(), 0700) == -1) {
                if (log)
                    log(log_level::error, "Could not create directory '" + dir.substr(0, 200) + "' (" +
                                              std::strerror(errno) + ").");
            }
        }
    }
    std::string text;
    const std::string key_text = format_public_key(key);
    if (hash) {
        // Each name (host, address) gets a line of its own.
        std::string_view rest = names;
        while (true) {
            const auto comma = rest.find(',');
            const std::string name = lowercase(rest.substr(0, comma));
            text += hash_known_host(name, rng) + " " + key_text + "\n";
            if (comma == std::string_view::npos)
                break;
            rest.remove_prefix(comma + 1);
        }
    } else {
        text = lowercase(names) + " " + key_text + "\n";
    }
    const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (fd == -1)
        return false;
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return close(fd) == 0;
}

} // namespace longhaul
