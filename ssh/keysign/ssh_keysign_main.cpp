// ssh-keysign: the helper ssh runs for hostbased authentication, installed
// setuid root so it can read the host's private keys. As OpenSSH's: the
// key files are opened as root, then root is given up for good before any
// input is read; the administrator must turn it on (EnableSSHKeysign in
// /etc/ssh/ssh_config); and it signs one request, only if the request is a
// hostbased one for the connection it was handed (its local name) and the
// user who ran it (common/auth/keysign_protocol.hpp). Errors go to stderr
// in OpenSSH's words and end it with status 255.
#include "common/auth/keysign_protocol.hpp"
#include "common/fd_io.hpp"
#include "common/keys/key_file.hpp"
#include "common/local_name.hpp"
#include "common/transport/host_key_algorithms.hpp"
#include "common/wire.hpp"
#include "ssh/keysign/keysign_config.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace longhaul;

namespace {

[[noreturn]] void fatal(const std::string& message)
{
    const std::string line = message + "\r\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
    std::exit(255);
}

// OpenSSH's permanently_set_uid(): the user's uid and gid for real,
// effective and saved ids, and proof that root cannot be had back.
void give_up_root(const passwd& pw)
{
    const uid_t old_uid = ::getuid();
    const gid_t old_gid = ::getgid();
    if (::setresgid(pw.pw_gid, pw.pw_gid, pw.pw_gid) != 0)
        fatal("setresgid " + std::to_string(pw.pw_gid) + ": " + std::strerror(errno));
    if (::setresuid(pw.pw_uid, pw.pw_uid, pw.pw_uid) != 0)
        fatal("setresuid " + std::to_string(pw.pw_uid) + ": " + std::strerror(errno));
    if (old_gid != pw.pw_gid && pw.pw_uid != 0 && (::setgid(old_gid) != -1 || ::setegid(old_gid) != -1))
        fatal("permanently_set_uid: was able to restore old [e]gid");
    if (::getgid() != pw.pw_gid || ::getegid() != pw.pw_gid)
        fatal("permanently_set_uid: egid incorrect gid:" + std::to_string(::getgid()) + " egid:" +
              std::to_string(::getegid()) + " (should be " + std::to_string(pw.pw_gid) + ")");
    if (old_uid != pw.pw_uid && (::setuid(old_uid) != -1 || ::seteuid(old_uid) != -1))
        fatal("permanently_set_uid: was able to restore old [e]uid");
    if (::getuid() != pw.pw_uid || ::geteuid() != pw.pw_uid)
        fatal("permanently_set_uid: euid incorrect uid:" + std::to_string(::getuid()) + " euid:" +
              std::to_string(::geteuid()) + " (should be " + std::to_string(pw.pw_uid) + ")");
}

// OpenSSH's ssh_msg_recv: uint32 length (at most 256 KiB), then the body.
std::optional<bytes> receive_message()
{
    std::uint8_t header[4];
    if (!read_exactly(STDIN_FILENO, header, sizeof header))
        return std::nullopt;
    const auto n = keysign_frame_length(header);
    if (!n) {
        const std::string line =
            "ssh_msg_recv: read: bad msg_len " + std::to_string(wire_reader(byte_span(header, 4)).u32()) + "\r\n";
        (void)!::write(STDERR_FILENO, line.data(), line.size());
        return std::nullopt;
    }
    bytes body(*n);
    if (!read_exactly(STDIN_FILENO, body.data(), body.size()))
        return std::nullopt;
    return body;
}

} // namespace

int main()
{
    // The host's private keys will be in this memory: no core file, and no
    // tracing by the user once root is given up.
    (void)::prctl(PR_SET_DUMPABLE, 0);
    // stdin, stdout and stderr must be open before anything is opened.
    const int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd < 2)
        return 1;
    if (null_fd > 2)
        ::close(null_fd);

    // The host keys, opened while still root.
    std::vector<int> key_fds;
    for (const char* path : hostbased_key_files)
        key_fds.push_back(::open(path, O_RDONLY | O_CLOEXEC));

    const passwd* found = ::getpwuid(::getuid());
    if (found == nullptr)
        fatal("getpwuid failed");
    passwd pw = *found;
    const std::string user_name = pw.pw_name;
    give_up_root(pw);

    keysign_settings settings;
    try {
        const config_environment env = keysign_environment();
        settings = read_keysign_settings(env, [](log_level level, std::string_view line) {
            if (level <= log_level::info) {
                const std::string text = std::string(line) + "\r\n";
                (void)!::write(STDERR_FILENO, text.data(), text.size());
            }
        });
        if (!settings.enabled)
            fatal("ssh-keysign not enabled in " + env.system_config);
    } catch (const std::exception& e) {
        fatal(e.what());
    }

    bool any_open = false;
    for (int fd : key_fds)
        any_open |= fd >= 0;
    if (!any_open)
        fatal("could not open any host key");
    std::vector<private_key> keys;
    for (int fd : key_fds) {
        if (fd < 0)
            continue;
        auto text = read_key_file(fd);
        ::close(fd);
        if (!text)
            continue;
        // Host keys have no passphrase; one that has one is skipped.
        auto key = parse_private_key(as_string_view(text->span()), std::nullopt);
        if (key)
            keys.push_back(std::move(*key));
    }
    if (keys.empty())
        fatal("no hostkey found");

    const auto message = receive_message();
    if (!message)
        fatal("ssh-keysign: ssh_msg_recv failed");
    std::string error;
    const auto request = decode_keysign_request(*message, error);
    if (!request)
        fatal("ssh-keysign: " + error);
    const std::string host = local_host_name(request->fd);
    const bytes& data = request->data;

    std::string why;
    auto req = check_keysign_data(data, host, user_name, why);
    if (!req)
        fatal(why.empty() ? std::string("ssh-keysign: not a valid request") : "valid_request: " + why);

    const private_key* signer = nullptr;
    for (const auto& k : keys)
        if (k.public_part() == req->key)
            signer = &k;
    if (signer == nullptr)
        fatal("ssh-keysign: no matching hostkey found for key " + std::string(key_type_short_name(req->key.type())) +
              (req->certificate ? "-CERT " : " ") + key_fingerprint(req->key, settings.fingerprint));

    auto sig = signer->sign(host_key_signature_algorithm(req->algorithm), data);
    if (!sig)
        fatal("ssh-keysign: sshkey_sign failed: " + std::string(to_string(sig.error())));
    if (!write_all(STDOUT_FILENO, encode_keysign_reply(*sig)))
        fatal("ssh-keysign: ssh_msg_send failed");
    return 0;
}
