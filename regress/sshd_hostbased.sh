#!/usr/bin/env bash
# Hostbased authentication with Longhaul's ssh, sshd and ssh-keysign
# beside Debian's (OpenSSH 9.2), as a test user. Every case runs twice:
# with Debian's ssh and its setuid ssh-keysign as the client, then with
# Longhaul's ssh and Longhaul's ssh-keysign (setuid, bound over Debian's
# path, where both ssh programs run it from). For each case both servers
# run with the same settings; the client's outcome and the servers' log
# lines about it (mismatch, "Accepted ... public key", "Accepted/Failed
# hostbased", refusals for modes, revoked keys) must be the same, and the
# outcome the expected one:
#  - /etc/ssh/shosts.equiv naming the client's address: accepted; naming
#    another host, or negated ("-127.0.0.1"): refused;
#  - the client host's key missing from ssh_known_hosts, or @revoked there;
#  - ~/.shosts and ~/.rhosts under IgnoreRhosts yes, no and shosts-only,
#    and StrictModes refusing a world-writable ~/.shosts (group-writable
#    too, as upstream OpenSSH: Debian's patched sshd lets a user's own
#    private group write it);
#  - ~/.ssh/known_hosts, and IgnoreUserKnownHosts refusing it;
#  - HostbasedUsesNameFromPacketOnly (the client's own name, "localhost");
#  - HostbasedAcceptedAlgorithms without the key's algorithm;
#  - AuthenticationMethods hostbased, and PermitRootLogin for a hostbased
#    root login (prohibit-password allows it, no refuses it);
#  - a host certificate, its CA @cert-authority in ssh_known_hosts, and
#    one for another name.
# Then each ssh with the other's helper; ssh -v's hostbased lines against
# Debian's; and each helper alone (regress/keysign_request.py) with a good
# request and requests wrong in one field each, and without
# EnableSSHKeysign: the same status, stderr and (Ed25519 being
# deterministic) the same signature.
# The helpers read /etc/ssh (ssh_config and host keys) and both servers
# read /etc/ssh/shosts.equiv and ssh_known_hosts: the script runs in a
# mount namespace of its own with a directory of the test's bound over
# /etc/ssh, /dev/null over /etc/hosts.equiv when the machine has one, and
# an empty directory over root's home. The machine's own files are never
# touched. Needs root.
source "$(dirname "$0")/mount_namespace.sh"
lh_enter_mount_namespace "hostbased tests (ssh-keysign, test users)" "$@"
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
HERE=$(cd "$(dirname "$0")" && pwd)
LSSHD=$BUILD/bin/sshd
[ -x "$LSSHD" ] || lh_fail "not built: $LSSHD"
lh_require_openssh_server
KEYSIGN=/usr/lib/openssh/ssh-keysign
[ -u "$KEYSIGN" ] || lh_skip "Debian's ssh-keysign not found setuid at $KEYSIGN (openssh-client)"
T=$LH_TMP
chmod 711 "$T"

# /etc/ssh as Debian's ssh-keysign and both servers see it here.
E=$T/etc-ssh
mkdir -p "$E"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$E/ssh_host_ed25519_key"
printf 'Host *\n    EnableSSHKeysign yes\n' >"$E/ssh_config"
: >"$E/shosts.equiv"
: >"$E/ssh_known_hosts"
chmod 644 "$E/shosts.equiv" "$E/ssh_known_hosts" "$E/ssh_config"
mount --bind "$E" /etc/ssh || lh_skip "cannot bind a directory over /etc/ssh in a mount namespace"
[ ! -e /etc/hosts.equiv ] || mount --bind /dev/null /etc/hosts.equiv || lh_fail "cannot hide /etc/hosts.equiv"
HOSTKEY=$(cut -d' ' -f1,2 "$E/ssh_host_ed25519_key.pub")
# Root's home, for the root login case: an empty one of the test's.
ROOT_HOME=$(getent passwd root | cut -d: -f6)
mkdir -m 700 "$T/root-home"
mount --bind "$T/root-home" "$ROOT_HOME" || lh_fail "cannot bind a directory over $ROOT_HOME"

lh_make_user "pw-$RANDOM"
user=$LH_USER
home=$(getent passwd "$user" | cut -d: -f6)
chmod 755 "$home"
lh_make_host_keys "$T"

cat >"$T/client.conf" <<EOF
Host *
    HostbasedAuthentication yes
    PreferredAuthentications hostbased
    BatchMode yes
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    LogLevel ERROR
EOF
chmod 644 "$T/client.conf"

# serve LINES...: Debian's and Longhaul's sshd (port_debian, port_longhaul)
# taking hostbased logins with LINES first; the last pair is stopped.
SERVED=()
serve() {
    lh_stop_pids "${SERVED[@]:-}"
    SERVED=()
    local lines=("$@" "HostbasedAuthentication yes" "PubkeyAuthentication no" "PasswordAuthentication no"
                 "KbdInteractiveAuthentication no")
    lh_start_named_sshd debian /usr/sbin/sshd "${lines[@]}"
    SERVED+=("${LH_PIDS[-1]}")
    lh_start_named_sshd longhaul "$LSSHD" "${lines[@]}"
    SERVED+=("${LH_PIDS[-1]}")
}

# The lines a server logged about hostbased authentication after line
# $2 of its log, ports left out.
hostbased_lines() {
    tail -n +"$(($2 + 1))" "$1" |
        grep -E 'userauth_hostbased mismatch|Accepted [A-Z0-9-]+ public key|(Accepted|Failed|Partial) hostbased|Rhosts authentication refused|Authentication refused for|WARNING: revoked key|hosts file .* is not a regular file|ROOT LOGIN REFUSED' |
        sed -E 's/port [0-9]+/port N/g' || true
}
# Whether a server logged the end of a connection after line $2.
connection_ended() { tail -n +"$(($2 + 1))" "$1" | lh_matches -E 'Connection closed|Disconnected from'; }

# try WANT [LOGIN_AS]: Debian's ssh as the test user (or as root, logging
# in as LOGIN_AS) to both servers; WANT is "ok" or "refused". Both must
# give WANT and log the same lines about it.
try() {
    local want=$1 login=${2:-$user} as=$user name out rc
    [ "$login" = root ] && as=root
    local -A from
    for name in debian longhaul; do
        from[$name]=$(wc -l <"$T/srv-$name/sshd.log")
        local port_var="port_$name"
        rc=0
        out=$(runuser -u "$as" -- "$SSH_BIN" -F "$T/client.conf" -p "${!port_var}" -l "$login" 127.0.0.1 'echo hostbased-ok' \
            </dev/null 2>&1) || rc=$?
        if [ "$want" = ok ]; then
            [ "$rc" = 0 ] && [ "$out" = hostbased-ok ] || { echo "   $name: status $rc: $out"; return 1; }
        else
            [ "$rc" = 255 ] && [[ $out == *"Permission denied"* ]] || { echo "   $name: status $rc: $out"; return 1; }
        fi
        # The connection's last lines come as its process ends.
        lh_wait_until 5 connection_ended "$T/srv-$name/sshd.log" "${from[$name]}" || true
    done
    diff <(hostbased_lines "$T/srv-debian/sshd.log" "${from[debian]}") \
        <(hostbased_lines "$T/srv-longhaul/sshd.log" "${from[longhaul]}") >"$T/diff" ||
        { echo "   log lines differ (< Debian, > Longhaul):"; sed 's/^/   /' "$T/diff"; return 1; }
    if [ "$want" = ok ]; then
        hostbased_lines "$T/srv-longhaul/sshd.log" "${from[longhaul]}" | lh_matches 'Accepted hostbased for' ||
            { echo "   no Accepted line"; return 1; }
    fi
}

known() { echo "${1:-127.0.0.1} $HOSTKEY" >"$E/ssh_known_hosts"; }
equiv() { printf '%s\n' "$@" >"$E/shosts.equiv"; }
user_file() { # NAME TEXT [MODE]: a file in the user's home, the user's
    printf '%s\n' "$2" >"$home/$1"
    chown "$user:" "$home/$1"
    chmod "${3:-600}" "$home/$1"
}
reset_user() { rm -rf "$home/.shosts" "$home/.rhosts" "$home/.ssh"; }

# cases: every case with the client $CLIENT (its ssh and its ssh-keysign);
# check names start with the client.
cases() {
    rm -f "$ROOT_HOME/.shosts" "$E/ssh_host_ed25519_key-cert.pub"
    # --- the system files ---------------------------------------------------------
    serve
    check_equiv_accepts() { known && equiv 127.0.0.1 && try ok; }
    lh_check "$CLIENT ssh: shosts.equiv naming the client's address: accepted, logged as Debian's sshd logs it" check_equiv_accepts
    check_equiv_other() { known && equiv otherhost && try refused; }
    lh_check "$CLIENT ssh: shosts.equiv naming another host: refused, 'Failed hostbased ... client user, client host'" check_equiv_other
    check_equiv_negated() { known && equiv -127.0.0.1 127.0.0.1 && try refused; }
    lh_check "$CLIENT ssh: a negated entry first ('-127.0.0.1'): refused" check_equiv_negated
    check_equiv_user() { known && equiv "127.0.0.1 someoneelse" && try refused && equiv "127.0.0.1 $user" && try ok; }
    lh_check "$CLIENT ssh: an entry's user must be the client's user" check_equiv_user
    check_unknown_key() { known otherhost && equiv 127.0.0.1 && try refused; }
    lh_check "$CLIENT ssh: the client host's key not in ssh_known_hosts: refused" check_unknown_key
    check_revoked() {
        { echo "127.0.0.1 $HOSTKEY"; echo "@revoked * $HOSTKEY"; } >"$E/ssh_known_hosts" && equiv 127.0.0.1 && try refused &&
            grep -q 'WARNING: revoked key for 127.0.0.1 attempted authentication' "$T/srv-longhaul/sshd.log"
    }
    lh_check "$CLIENT ssh: @revoked in ssh_known_hosts: refused with OpenSSH's warning" check_revoked

    # --- the user's files ---------------------------------------------------------
    check_shosts_ignored() { reset_user && known && equiv && user_file .shosts "127.0.0.1 $user" && try refused; }
    lh_check "$CLIENT ssh: ~/.shosts under IgnoreRhosts yes (the default): refused" check_shosts_ignored
    serve "IgnoreRhosts no"
    check_shosts() { reset_user && known && equiv && user_file .shosts "127.0.0.1 $user" && try ok; }
    lh_check "$CLIENT ssh: ~/.shosts under IgnoreRhosts no: accepted" check_shosts
    check_rhosts() { reset_user && known && equiv && user_file .rhosts "127.0.0.1" && try ok; }
    lh_check "$CLIENT ssh: ~/.rhosts (host alone: the same user) under IgnoreRhosts no: accepted" check_rhosts
    serve "IgnoreRhosts no" "StrictModes yes"
    check_modes() {
        reset_user && known && equiv && user_file .shosts "127.0.0.1 $user" 606 && try refused &&
            grep -q "Rhosts authentication refused for $user: bad modes for $home/.shosts" "$T/srv-longhaul/sshd.log"
    }
    lh_check "$CLIENT ssh: StrictModes: a world-writable ~/.shosts is refused with OpenSSH's line" check_modes
    serve "IgnoreRhosts shosts-only"
    check_shosts_only() {
        reset_user && known && equiv && user_file .rhosts "127.0.0.1" && try refused &&
            user_file .shosts "127.0.0.1" && try ok
    }
    lh_check "$CLIENT ssh: IgnoreRhosts shosts-only: ~/.rhosts refused, ~/.shosts accepted" check_shosts_only
    serve
    check_user_known_hosts() {
        reset_user && known otherhost && equiv 127.0.0.1 && mkdir -m 700 "$home/.ssh" &&
            echo "127.0.0.1 $HOSTKEY" >"$home/.ssh/known_hosts" && chown -R "$user:" "$home/.ssh" && try ok
    }
    lh_check "$CLIENT ssh: the key in ~/.ssh/known_hosts: accepted" check_user_known_hosts
    serve "IgnoreUserKnownHosts yes"
    check_ignore_user_known() { try refused; }
    lh_check "$CLIENT ssh: IgnoreUserKnownHosts yes: the same key refused" check_ignore_user_known

    # --- names, algorithms, methods, root -----------------------------------------
    serve "HostbasedUsesNameFromPacketOnly yes"
    check_packet_name() {
        reset_user && known localhost && equiv localhost && try ok &&
            grep -q "Accepted ED25519 public key .* from $user@localhost" "$T/srv-longhaul/sshd.log"
    }
    lh_check "$CLIENT ssh: HostbasedUsesNameFromPacketOnly: the client's name ('localhost') looked up" check_packet_name
    serve "HostbasedAcceptedAlgorithms rsa-sha2-512,ecdsa-sha2-nistp256"
    check_algorithms() { reset_user && known && equiv 127.0.0.1 && try refused; }
    lh_check "$CLIENT ssh: HostbasedAcceptedAlgorithms without ssh-ed25519: refused" check_algorithms
    serve "AuthenticationMethods hostbased"
    check_methods() { known && equiv 127.0.0.1 && try ok; }
    lh_check "$CLIENT ssh: AuthenticationMethods hostbased: accepted" check_methods
    serve "PermitRootLogin prohibit-password" "IgnoreRhosts no"
    check_root() {
        # The system files never count for root: root's own ~/.shosts does
        # (in the test's directory bound over root's home, above).
        known && equiv 127.0.0.1 && try refused root || return 1
        echo "127.0.0.1 root" >"$ROOT_HOME/.shosts" && chmod 600 "$ROOT_HOME/.shosts" && try ok root || return 1
        serve "PermitRootLogin no" "IgnoreRhosts no"
        try refused root
    }
    lh_check "$CLIENT ssh: root: system files ignored, ~/.shosts accepted under prohibit-password, refused under no" check_root

    # --- a host certificate (last: the client offers it from here on) -----------
    serve
    rm -f "$T/host_ca" "$T/host_ca.pub"
    "$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$T/host_ca"
    certify() { # PRINCIPALS: the client host's key certified by host_ca for them
        rm -f "$E/ssh_host_ed25519_key-cert.pub"
        "$LH_SSH_KEYGEN" -q -s "$T/host_ca" -h -I "client host" -n "$1" "$E/ssh_host_ed25519_key.pub" 2>/dev/null &&
            chmod 644 "$E/ssh_host_ed25519_key-cert.pub"
    }
    check_host_cert() {
        reset_user && equiv 127.0.0.1 && certify 127.0.0.1 &&
            echo "@cert-authority 127.0.0.1 $(cut -d' ' -f1,2 "$T/host_ca.pub")" >"$E/ssh_known_hosts" && try ok &&
            grep -q "Accepted certificate ID \"client host\" signed by ED25519 CA .* from $user@127.0.0.1" \
                "$T/srv-longhaul/sshd.log"
    }
    lh_check "$CLIENT ssh: a host certificate whose CA is @cert-authority for the client: accepted, logged as Debian's sshd logs it" check_host_cert
    check_host_cert_name() { certify otherhost && try refused && grep -q 'Certificate invalid: name is not a listed principal' "$T/srv-longhaul/sshd.log"; }
    lh_check "$CLIENT ssh: a host certificate for another name: refused with OpenSSH's reason" check_host_cert_name
    rm -f "$E/ssh_host_ed25519_key-cert.pub"
}

# use_keysign debian|longhaul: which ssh-keysign is at $KEYSIGN, where both
# clients run it from (ours bound over Debian's, setuid as it is).
KEYSIGN_BOUND=0
use_keysign() {
    if [ "$KEYSIGN_BOUND" = 1 ]; then
        umount "$KEYSIGN" || lh_fail "cannot unbind $KEYSIGN"
        KEYSIGN_BOUND=0
    fi
    [ "$1" = debian ] && return 0
    mount --bind "$T/keysign/ssh-keysign" "$KEYSIGN" && mount -o remount,bind,suid "$KEYSIGN" ||
        lh_fail "cannot bind Longhaul's ssh-keysign over $KEYSIGN"
    KEYSIGN_BOUND=1
}
mkdir -m 755 "$T/keysign"
install -o root -g root -m 4755 "$BUILD/bin/ssh-keysign" "$T/keysign/ssh-keysign"
# The request tool, and a key no host file holds, where the test user reads them.
install -m 644 "$HERE/keysign_request.py" "$HERE/../tests/data/certs/ca_ed25519.pub" "$T/keysign/"
mv "$T/keysign/ca_ed25519.pub" "$T/keysign/other.pub"

CLIENT=debian SSH_BIN=/usr/bin/ssh
use_keysign debian
cases
CLIENT=longhaul SSH_BIN=$BUILD/bin/ssh
use_keysign longhaul
cases

# --- each ssh with the other's ssh-keysign ----------------------------------
serve
check_cross() { # SSH KEYSIGN
    SSH_BIN=$1
    use_keysign "$2"
    reset_user && known && equiv 127.0.0.1 && try ok
}
lh_check "longhaul ssh with Debian's ssh-keysign: accepted" check_cross "$BUILD/bin/ssh" debian
lh_check "Debian's ssh with Longhaul's ssh-keysign: accepted" check_cross /usr/bin/ssh longhaul

# --- ssh -v says what Debian's says -----------------------------------------
verbose_lines() { # SSH: the hostbased lines of a refused login, ports left out
    runuser -u "$user" -- "$1" -v -F "$T/client.conf" -p "$port_longhaul" 127.0.0.1 true </dev/null 2>&1 |
        tr -d '\r' | grep -E 'hostbased|hostkey|keysign' | sed -E 's/port [0-9]+/port N/g' || true
}
check_verbose() {
    use_keysign longhaul
    reset_user && known && equiv otherhost || return 1
    verbose_lines /usr/bin/ssh >"$T/v.debian"
    verbose_lines "$BUILD/bin/ssh" >"$T/v.longhaul"
    grep -q 'userauth_hostbased: trying hostkey ssh-ed25519' "$T/v.debian" && diff "$T/v.debian" "$T/v.longhaul" >"$T/vdiff" ||
        { echo "   -v lines differ (< Debian, > Longhaul):"; sed 's/^/   /' "$T/vdiff" "$T/v.debian"; return 1; }
}
lh_check "ssh -v: the hostbased lines of a refused login are Debian's" check_verbose

# --- ssh-keysign alone: the same answers as Debian's ---------------------------
# regress/keysign_request.py runs a helper as the test user with a
# request it builds (good, or wrong in one field) on a connection to the
# server, and prints its status, stderr and reply.
keysign_answers() { # HELPER: one line per case
    local helper=$1 c
    for c in good bad-version bad-fd short chost luser service method session-id algorithm trailing unknown-key; do
        printf '%s: ' "$c"
        runuser -u "$user" -- python3 "$T/keysign/keysign_request.py" "$helper" "$c" 127.0.0.1 "$port_debian" \
            "$E/ssh_host_ed25519_key.pub" "$user" "$T/keysign/other.pub" 2>&1 | paste -sd'|'
    done
}
check_keysign_alone() {
    use_keysign debian
    keysign_answers "$KEYSIGN" >"$T/answers.debian"
    use_keysign longhaul
    keysign_answers "$KEYSIGN" >"$T/answers.longhaul"
    grep -q '^good: status 0|signature ssh-ed25519 ' "$T/answers.debian" ||
        { echo "   Debian's helper did not sign:"; sed 's/^/   /' "$T/answers.debian"; return 1; }
    diff "$T/answers.debian" "$T/answers.longhaul" >"$T/adiff" ||
        { echo "   answers differ (< Debian, > Longhaul):"; sed 's/^/   /' "$T/adiff"; return 1; }
}
lh_check "ssh-keysign: Longhaul's signs what Debian's signs (the same Ed25519 signature) and refuses what it refuses, in its words" check_keysign_alone
check_not_enabled() {
    printf 'Host *\n    EnableSSHKeysign no\n' >"$E/ssh_config"
    use_keysign debian
    keysign_answers "$KEYSIGN" | head -n 1 >"$T/off.debian"
    use_keysign longhaul
    keysign_answers "$KEYSIGN" | head -n 1 >"$T/off.longhaul"
    printf 'Host *\n    EnableSSHKeysign yes\n' >"$E/ssh_config"
    grep -q 'ssh-keysign not enabled in /etc/ssh/ssh_config' "$T/off.debian" && cmp -s "$T/off.debian" "$T/off.longhaul" ||
        { echo "   debian: $(cat "$T/off.debian")"; echo "   longhaul: $(cat "$T/off.longhaul")"; return 1; }
}
lh_check "ssh-keysign without EnableSSHKeysign: refused as Debian's refuses" check_not_enabled
use_keysign debian

lh_summary
