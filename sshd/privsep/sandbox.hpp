// The pre-authentication sandbox (issue 12): the per-connection child that
// parses everything the network sends before authentication (transport,
// key exchange, userauth) confines itself here before reading a byte, so a
// bug in that parsing yields an unprivileged process in an empty chroot that
// can do little more than read and write the descriptors it already holds.
// This is OpenSSH's privsep_preauth_child() plus its seccomp sandbox
// (sandbox-seccomp-filter.c).
#pragma once

#include "common/result.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

// Builds with a sanitizer runtime (CI's AddressSanitizer + UBSan sshd)
// need a little more in the sandbox: its memory probes write into a pipe.
#if defined(__SANITIZE_ADDRESS__)
#define LONGHAUL_SANITIZER_RUNTIME 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define LONGHAUL_SANITIZER_RUNTIME 1
#endif
#endif

namespace longhaul::privsep {

// Descriptors the sandbox allows beyond sandbox_settings::poll_descriptors:
// none in release builds, a few for the sanitizer runtime's pipes.
#ifdef LONGHAUL_SANITIZER_RUNTIME
inline constexpr unsigned sanitizer_descriptors = 64;
#else
inline constexpr unsigned sanitizer_descriptors = 0;
#endif

// OpenSSH's SSH_PRIVSEP_USER and _PATH_PRIVSEP_CHROOT_DIR as Debian builds it.
inline constexpr std::string_view default_user_name = "sshd";
inline constexpr std::string_view default_chroot_directory = "/run/sshd";

struct sandbox_settings {
    // chroot() here, then chdir("/"); empty: no chroot. Needs root.
    std::string chroot_directory;
    // Become this user for good (groups reduced to just `gid`, then
    // setresgid, setresuid, and a check that root cannot be regained). Both
    // or neither; needs root.
    std::optional<uid_t> uid;
    std::optional<gid_t> gid;
    // When >= 0, a forbidden system call writes one line, "sandbox:
    // forbidden system call N\n", here before the child exits with status
    // 128 + SIGSYS; when -1 the kernel kills the child with SIGSYS instead
    // (and the audit log records the call). For debugging.
    int report_fd = -1;
    // RLIMIT_NOFILE. poll(2) fails with EINVAL when asked about more
    // descriptors than this, so it must cover the most the child polls at
    // once (the client's socket and the monitor's); no new descriptor can
    // be numbered at or above it.
    unsigned poll_descriptors = 2;
};

// What sshd's start-up checks, so that a misconfigured system fails before
// the first connection, with OpenSSH's messages. As root: `user` must exist
// ("Privilege separation user sshd does not exist") and `directory` must be
// a directory ("Missing privilege separation directory: /run/sshd") owned by
// root and not writable by group or others ("/run/sshd must be owned by root
// and not group or world-writable."); the settings name both. Without root
// (an unprivileged sshd serves only its own user, as OpenSSH's does) there
// is nothing to check and the settings hold neither: the child keeps its
// ids and its root and is confined by the filter alone.
result<sandbox_settings> preauth_sandbox_settings(std::string& error,
                                                  std::string_view user = default_user_name,
                                                  std::string_view directory = default_chroot_directory);

// Enters the sandbox, in the forked child, for good: chroot and chdir("/"),
// drop groups and ids (as root only; settings asking for them without root
// are an error), then RLIMIT_FSIZE 0, RLIMIT_NOFILE poll_descriptors and
// RLIMIT_NPROC 0, PR_SET_NO_NEW_PRIVS, and finally the seccomp filter
// (sandbox.cpp lists what it allows and why). `error` says which step
// failed; the caller must then exit, as the process may be half-confined.
//
// OpenSSL is initialised first (OPENSSL_init_crypto, which reads
// openssl.cnf and loads the providers, and a first RAND_bytes, which
// instantiates and seeds the DRBG), while the files it reads are still
// reachable. Once inside, its ciphers, MACs, digests, key agreement (X25519,
// ECDH, DH), signature verification (RSA, ECDSA, Ed25519) and RAND work,
// even on their first use (tests/sshd/privsep/sandbox_test.cpp runs each in
// a freshly started process).
//
// The caller must be single-threaded: the filter covers the calling thread
// only, and no thread can be started inside.
result<void> enter_preauth_sandbox(const sandbox_settings& settings, std::string& error);

} // namespace longhaul::privsep
