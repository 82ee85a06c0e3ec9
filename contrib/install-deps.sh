#!/bin/sh
# Installs the Debian 12 packages that Longhaul SSH builds and tests with.
# Only packages that are missing are installed, so a second run is quick and offline.
set -eu

# The second group is what the tests use (docs/TESTING.md): OpenSSH both
# ways, PAM modules (pam_exec, pam_unix), test users (passwd), terminals
# (tmux, script from bsdutils), python3 (pty driver, run-tests.sh summary),
# xauth (X11 forwarding's cookies, both sides), git (ssh-keygen -Y signing
# a commit), the emulated WAN's tools, and softhsm2 (a software PKCS#11
# token for ssh -I, ssh-add -s and ssh-keygen -D) with opensc's
# pkcs11-tool (certificate objects on it). libp11-kit-dev gives the PKCS#11
# header. ninja-build: contrib/run-tests.sh builds with it (a fifth less CPU
# than make for the same tree).
packages="build-essential cmake ninja-build pkg-config libssl-dev zlib1g-dev libedit-dev libboost-dev libseccomp-dev
doctest-dev libpam0g-dev libcrypt-dev clang libclang-rt-14-dev lld libp11-kit-dev
openssh-client openssh-server libpam-modules libpam-runtime passwd tmux bsdutils python3 xauth git
iproute2 iperf3 iputils-ping procps psmisc util-linux coreutils diffutils netcat-openbsd softhsm2 opensc"

# OpenSSH's sshd (the reference peer in the tests) needs its privilege
# separation directory, which the package's service creates when it starts:
# a machine where it never ran (a container, a CI image) lacks it.
if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then
    mkdir -p /run/sshd && chmod 0755 /run/sshd
fi

missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "install-deps: all packages present"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
else
    SUDO=
fi
echo "install-deps: installing$missing"
# The package scripts must not start a system sshd: tests start their own on ephemeral ports.
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
