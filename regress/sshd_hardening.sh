#!/usr/bin/env bash
# Regression tests for the sshd defects of issue 12, each against Debian's
# OpenSSH client and each able to fail on the defect it guards:
#  1. ~/.ssh/rc never runs for a subsystem or under ForceCommand;
#  2. RevokedKeys: a revoked key (key list or KRL) is refused;
#  3. sessions get umask(umask(077) | 022) whatever sshd was started with;
#  4. PAM never gets the real password of root under PermitRootLogin
#     prohibit-password, nor of an invalid user.
# Needs root (test users, a PAM service file): without it, it skips.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_SSHD=$BUILD/bin/sshd
[ -x "$LH_SSHD" ] || lh_fail "sshd not built ($LH_SSHD)"
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found"
command -v sftp >/dev/null || lh_skip "OpenSSH's sftp client not found"
[ "$(id -u)" = 0 ] || lh_skip "needs root: test users and a PAM service"
[ -x /usr/lib/openssh/sftp-server ] || lh_skip "OpenSSH's sftp-server not found (openssh-server)"
T=$LH_TMP
chmod 755 "$T"

lh_make_host_keys "$T"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C user-key -f "$T/id_user"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -C revoked-key -f "$T/id_revoked"
"$LH_SSH_KEYGEN" -q -t ecdsa -N '' -C krl-key -f "$T/id_krl"
cat "$T/id_user.pub" "$T/id_revoked.pub" "$T/id_krl.pub" >"$T/authorized_keys"
chmod 644 "$T/authorized_keys"
pw="Pw-$RANDOM-$RANDOM"
lh_make_user "$pw"
user=$LH_USER
home=$(getent passwd "$user" | cut -d: -f6)

# known_hosts_for PORT: $T/known_hosts.PORT for the servers' host keys.
known_hosts_for() { lh_known_hosts "$T" "$1"; }
# ssh_to PORT KEY [ssh args...]: OpenSSH's ssh as the test user with one key.
ssh_to() { lh_ssh_to "$T" "$@"; }

# ---------------------------------------------------------------- 1. ~/.ssh/rc
# The rc file leaves a marker; it must appear for a plain command (the
# control, so the check can see rc at all) and never for sftp or under
# ForceCommand.
mkdir -p "$home/.ssh"
printf 'touch "$HOME/rc-ran"\n' >"$home/.ssh/rc"
chown -R "$user:" "$home/.ssh"
lh_port port
lh_start_sshd "$T" "$port" "PermitUserRC yes"
known_hosts_for "$port"
rc_ran() { [ -e "$home/rc-ran" ]; }
check_rc_for_command() {
    rm -f "$home/rc-ran"
    [ "$(ssh_to "$port" "$T/id_user" "$user@127.0.0.1" 'echo hi')" = hi ] && rc_ran
}
lh_check "~/.ssh/rc runs before a command (control)" check_rc_for_command
check_rc_not_for_subsystem() {
    rm -f "$home/rc-ran"
    echo "pwd" >"$T/sftp.batch"
    sftp -F /dev/null -P "$port" -o "UserKnownHostsFile=$T/known_hosts.$port" -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -i "$T/id_user" -b "$T/sftp.batch" \
        "$user@127.0.0.1" >"$T/sftp.out" 2>&1 </dev/null || return 1
    grep -q "Remote working directory" "$T/sftp.out" && ! rc_ran
}
lh_check "~/.ssh/rc is not run for the sftp subsystem" check_rc_not_for_subsystem

lh_port port_fc
mkdir -p "$T/fc"
cp "$T"/ssh_host_* "$T/authorized_keys" "$T/fc/"
lh_start_sshd "$T/fc" "$port_fc" "PermitUserRC yes" "ForceCommand echo forced:\$SSH_ORIGINAL_COMMAND"
known_hosts_for "$port_fc"
check_rc_not_under_force_command() {
    rm -f "$home/rc-ran"
    [ "$(ssh_to "$port_fc" "$T/id_user" "$user@127.0.0.1" 'echo hi')" = "forced:echo hi" ] && ! rc_ran
}
lh_check "~/.ssh/rc is not run under ForceCommand" check_rc_not_under_force_command
rm -f "$home/.ssh/rc" "$home/rc-ran"

# ---------------------------------------------------------------- 3. umask
# sshd started with umask 000 must still give sessions 022 (and keep a
# stricter 077).
for start_umask in 000 077; do
    lh_port p
    mkdir -p "$T/um$start_umask"
    cp "$T"/ssh_host_* "$T/authorized_keys" "$T/um$start_umask/"
    old_umask=$(umask)
    umask "$start_umask"
    lh_start_sshd "$T/um$start_umask" "$p"
    umask "$old_umask"
    known_hosts_for "$p"
    want=0022
    [ "$start_umask" = 077 ] && want=0077
    check_umask() {
        local got
        got=$(ssh_to "$1" "$T/id_user" "$user@127.0.0.1" 'umask; rm -f f; touch f; stat -c %a f; rm -f f' | paste -sd' ')
        [ "$got" = "$2 $3" ] || { echo "  got '$got', want '$2 $3'"; return 1; }
    }
    mode=644
    [ "$want" = 0077 ] && mode=600
    lh_check "sshd started with umask $start_umask: session umask $want" check_umask "$p" "$want" "$mode"
done

# ---------------------------------------------------------------- 2. RevokedKeys
{
    # A plain list of public keys, and a KRL made by OpenSSH's ssh-keygen -k.
    cp "$T/id_revoked.pub" "$T/revoked.list"
    "$LH_SSH_KEYGEN" -q -k -f "$T/revoked.krl" "$T/id_krl.pub"
    for kind in list krl missing; do
        lh_port p
        mkdir -p "$T/rk-$kind"
        cp "$T"/ssh_host_* "$T/authorized_keys" "$T/rk-$kind/"
        file=$T/revoked.$kind
        lh_start_sshd "$T/rk-$kind" "$p" "RevokedKeys $file"
        known_hosts_for "$p"
        login() { [ "$(ssh_to "$1" "$2" "$user@127.0.0.1" 'echo in' 2>/dev/null)" = in ]; }
        case $kind in
        list)
            check_list() {
                ! login "$p" "$T/id_revoked" && login "$p" "$T/id_user" &&
                    grep -q "Authentication key ED25519 SHA256:[^ ]* revoked by file $file" "$T/rk-$kind/sshd.log"
            }
            lh_check "RevokedKeys (key list): the listed key is refused, others log in" check_list
            ;;
        krl)
            check_krl() {
                ! login "$p" "$T/id_krl" && login "$p" "$T/id_user" && login "$p" "$T/id_revoked" &&
                    grep -q "Authentication key ECDSA SHA256:[^ ]* revoked by file $file" "$T/rk-$kind/sshd.log"
            }
            lh_check "RevokedKeys (KRL from ssh-keygen -k): the revoked key is refused, others log in" check_krl
            ;;
        missing)
            check_missing() {
                ! login "$p" "$T/id_user" &&
                    grep -q "Error checking authentication key ED25519 SHA256:[^ ]* in revoked keys file $file" \
                        "$T/rk-$kind/sshd.log"
            }
            lh_check "RevokedKeys naming a missing file refuses every key (fails closed)" check_missing
            ;;
        esac
    done
}

# ---------------------------------------------------------------- 4. PAM passwords
# A PAM service of our own, named after the sshd binary as OpenSSH names
# it (__progname): pam_exec records a digest of every password it is given.
# Without PAM these checks are skipped (recorded; the checks above stand).
pam_missing=
[ -d /etc/pam.d ] || pam_missing="no /etc/pam.d (PAM)"
[ -n "$pam_missing" ] || [ -e /lib/x86_64-linux-gnu/security/pam_exec.so ] ||
    [ -n "$(find / -xdev -name pam_exec.so -print -quit 2>/dev/null)" ] ||
    pam_missing="pam_exec.so not installed (libpam-modules)"
if [ -n "$pam_missing" ]; then
    lh_skip_check "PAM never gets the password of root or of an invalid user" "$pam_missing"
    lh_summary
    exit
fi
service="sshd-lhtest$$"
mkdir -p "$T/bin"
ln -s "$BUILD/bin/sshd" "$T/bin/$service"
cat >"$T/record-authtok.sh" <<EOF
#!/bin/sh
# stdin: the authentication token and a NUL (pam_exec expose_authtok).
printf '%s %s\n' "\$PAM_USER" "\$(tr -d '\\000' | sha256sum | cut -c1-64)" >>"$T/authtoks"
exit 0
EOF
chmod 700 "$T/record-authtok.sh"
LH_CLEANUP_FILES+=("/etc/pam.d/$service")
cat >"/etc/pam.d/$service" <<EOF
# Longhaul regress/sshd_hardening.sh (pid $$); removed when the test ends.
auth     optional pam_exec.so quiet expose_authtok $T/record-authtok.sh
auth     required pam_unix.so try_first_pass
account  required pam_unix.so
session  required pam_unix.so
password required pam_unix.so
EOF
lh_port port_pam
mkdir -p "$T/pam"
cp "$T"/ssh_host_* "$T/authorized_keys" "$T/pam/"
LH_SSHD=$T/bin/$service lh_start_sshd "$T/pam" "$port_pam" "UsePAM yes" "PermitRootLogin prohibit-password" \
    "PasswordAuthentication yes" "KbdInteractiveAuthentication yes"
known_hosts_for "$port_pam"
askpass=$(lh_askpass)
digest() { printf '%s' "$1" | sha256sum | cut -c1-64; }
# try_password WHO METHOD PASSWORD: one attempt; succeeds only if it logged in.
try_password() {
    LH_ASKPASS_ANSWER=$3 SSH_ASKPASS=$askpass SSH_ASKPASS_REQUIRE=force DISPLAY=none \
        ssh -F /dev/null -p "$port_pam" -o "UserKnownHostsFile=$T/known_hosts.$port_pam" \
        -o StrictHostKeyChecking=yes -o PubkeyAuthentication=no -o NumberOfPasswordPrompts=1 \
        -o "PreferredAuthentications=$2" "$1@127.0.0.1" true </dev/null >/dev/null 2>&1
}
for method in password keyboard-interactive; do
    : >"$T/authtoks"
    check_pam_gets_user_password() {
        try_password "$user" "$method" "$pw" && grep -qx "$user $(digest "$pw")" "$T/authtoks"
    }
    lh_check "$method: PAM gets an ordinary user's password (control)" check_pam_gets_user_password
    root_guess="RootGuess-$RANDOM$RANDOM"
    check_pam_root() {
        ! try_password root "$method" "$root_guess" &&
            grep -q "^root " "$T/authtoks" && ! grep -q "$(digest "$root_guess")" "$T/authtoks"
    }
    lh_check "$method: PAM never gets root's typed password under prohibit-password" check_pam_root
    nobody="lhnouser$$"
    check_pam_invalid() {
        ! getent passwd "$nobody" >/dev/null && ! try_password "$nobody" "$method" "$root_guess" &&
            ! grep -q "$(digest "$root_guess")" "$T/authtoks"
    }
    lh_check "$method: PAM never gets an invalid user's typed password" check_pam_invalid
done

lh_summary
