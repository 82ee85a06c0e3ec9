#!/usr/bin/env bash
# Host certificates (HostCertificate, @cert-authority) both ways:
#  - Debian's ssh, with a known_hosts holding only a @cert-authority line
#    and StrictHostKeyChecking yes, logs in to Longhaul's sshd through every
#    certificate host key algorithm;
#  - Longhaul's ssh does the same against Debian's sshd, and prints what
#    Debian's ssh -v prints about the certificate, line for line;
#  - refusals: a CA that is not in known_hosts, a host name that is not a
#    principal, a CA signature algorithm CASignatureAlgorithms leaves out, a
#    revoked CA: "No matching CA found. Retry with plain key", then the plain
#    key is unknown and strict checking refuses it, as Debian's ssh does;
#  - sshd: `sshd -T` prints hostcertificate as Debian's does, and a
#    certificate for no loaded host key is logged and skipped.
# Certificates are made here with Debian's ssh-keygen.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
SSH=${LH_SSH_CLIENT:-$BUILD/bin/ssh}
OUR_SSHD=$BUILD/bin/sshd
DEB_SSHD=/usr/sbin/sshd
[ -x "$SSH" ] || lh_fail "ssh not built ($SSH)"
[ -x "$OUR_SSHD" ] || lh_fail "sshd not built ($OUR_SSHD)"
LH_SSHD=$DEB_SSHD
lh_require_openssh_server
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found"
T=$LH_TMP
KG=$LH_SSH_KEYGEN

"$KG" -q -t ed25519 -N '' -C "host CA" -f "$T/ca"
"$KG" -q -t ed25519 -N '' -C "other CA" -f "$T/other_ca"
"$KG" -q -t rsa -b 2048 -N '' -C "RSA CA" -f "$T/rsa_ca"
"$KG" -q -t ed25519 -N '' -f "$T/id_ed25519"
chmod 600 "$T"/id_ed25519

types=(ed25519 ecdsa256 ecdsa384 ecdsa521 rsa)
# server_dir DIR PRINCIPALS [ssh-keygen -s options...]: host keys in DIR,
# each certified by the CA for PRINCIPALS.
server_dir() {
    local dir=$1 names=$2 k serial=100
    shift 2
    mkdir -p "$dir"
    lh_make_host_keys "$dir"
    for k in "${types[@]}"; do
        serial=$((serial + 1))
        "$KG" -q -s "$T/ca" -h -I "host $k" -n "$names" -z "$serial" "$@" "$dir/ssh_host_${k}_key.pub"
    done
    cp "$T/id_ed25519.pub" "$dir/authorized_keys"
}
cert_lines() {
    local dir=$1 k
    for k in "${types[@]}"; do
        echo "HostCertificate $dir/ssh_host_${k}_key-cert.pub"
    done
}

server_dir "$T/lh" 127.0.0.1,localhost
server_dir "$T/deb" 127.0.0.1,localhost
server_dir "$T/deb_badname" other.example
mkdir -p "$T/deb_rsaca"
lh_make_host_keys "$T/deb_rsaca"
"$KG" -q -s "$T/rsa_ca" -t rsa-sha2-256 -h -I "rsa-signed" -n 127.0.0.1 "$T/deb_rsaca/ssh_host_ed25519_key.pub"
cp "$T/id_ed25519.pub" "$T/deb_rsaca/authorized_keys"
# Security keys as CAs (OpenSSH's default CASignatureAlgorithms lists both
# sk algorithms), made and used by Debian's ssh-keygen through the test
# provider: the server's ed25519 key certified by an ed25519-sk CA, its
# ECDSA P-256 key by an ecdsa-sk CA.
PROVIDER=$BUILD/regress/sk_test_provider.so
[ -f "$PROVIDER" ] || lh_fail "the test provider is not built ($PROVIDER)"
mkdir -p "$T/deb_skca"
lh_make_host_keys "$T/deb_skca"
cp "$T/id_ed25519.pub" "$T/deb_skca/authorized_keys"
for pair in ed25519-sk:ed25519 ecdsa-sk:ecdsa256; do
    "$KG" -q -t "${pair%%:*}" -w "$PROVIDER" -N '' -C "${pair%%:*} CA" -f "$T/${pair%%:*}_ca"
    "$KG" -q -s "$T/${pair%%:*}_ca" -w "$PROVIDER" -h -I "${pair%%:*}-signed" -n 127.0.0.1 \
        "$T/deb_skca/ssh_host_${pair##*:}_key.pub" 2>/dev/null # the touch notice
done
{
    echo "@cert-authority 127.0.0.1 $(cat "$T/ed25519-sk_ca.pub")"
    echo "@cert-authority 127.0.0.1 $(cat "$T/ecdsa-sk_ca.pub")"
} >"$T/kh_skca"
# A certificate for a key the server does not load.
"$KG" -q -t ed25519 -N '' -f "$T/stray_key"
"$KG" -q -s "$T/ca" -h -I stray -n 127.0.0.1 "$T/stray_key.pub"

lh_port lh_port_
lh_port deb_port
lh_port bad_port
lh_port rsaca_port
lh_port skca_port
LH_SSHD=$OUR_SSHD
lh_start_sshd "$T/lh" "$lh_port_" "UsePAM no" $(cert_lines "$T/lh" | sed 's/ /=/') \
    "HostCertificate=$T/stray_key-cert.pub"
LH_SSHD=$DEB_SSHD
lh_start_sshd "$T/deb" "$deb_port" "UsePAM no" $(cert_lines "$T/deb" | sed 's/ /=/')
lh_start_sshd "$T/deb_badname" "$bad_port" "UsePAM no" $(cert_lines "$T/deb_badname" | sed 's/ /=/')
lh_start_sshd "$T/deb_rsaca" "$rsaca_port" "UsePAM no" "HostCertificate=$T/deb_rsaca/ssh_host_ed25519_key-cert.pub"
lh_start_sshd "$T/deb_skca" "$skca_port" "UsePAM no" "HostCertificate=$T/deb_skca/ssh_host_ed25519_key-cert.pub" \
    "HostCertificate=$T/deb_skca/ssh_host_ecdsa256_key-cert.pub"

# known_hosts with nothing but a @cert-authority line.
echo "@cert-authority 127.0.0.1,localhost $(cat "$T/ca.pub")" >"$T/kh_ca"
echo "@cert-authority [127.0.0.1]:* $(cat "$T/ca.pub")" >"$T/kh_ca_port"
echo "@cert-authority * $(cat "$T/other_ca.pub")" >"$T/kh_other"
echo "@cert-authority 127.0.0.1 $(cat "$T/rsa_ca.pub")" >"$T/kh_rsa"
{
    cat "$T/kh_ca"
    echo "@revoked * $(cat "$T/ca.pub")"
} >"$T/kh_revoked"

opts() { # KNOWN_HOSTS PORT
    echo -F /dev/null -p "$2" -o "UserKnownHostsFile=$1" -o GlobalKnownHostsFile=/dev/null \
        -o StrictHostKeyChecking=yes -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none \
        -i "$T/id_ed25519"
}
cert_algs=(ssh-ed25519-cert-v01@openssh.com ecdsa-sha2-nistp256-cert-v01@openssh.com
           ecdsa-sha2-nistp384-cert-v01@openssh.com ecdsa-sha2-nistp521-cert-v01@openssh.com
           rsa-sha2-512-cert-v01@openssh.com rsa-sha2-256-cert-v01@openssh.com)
cert_type_of() { case $1 in rsa-sha2-*) echo ssh-rsa-cert-v01@openssh.com ;; *) echo "$1" ;; esac; }

# ---------------------------------------------------------------- Debian's ssh -> Longhaul's sshd
debian_to_longhaul() {
    local alg=$1 kh=${2:-$T/kh_ca} out
    out=$(ssh $(opts "$kh" "$lh_port_") -v -o "HostKeyAlgorithms=$alg" 127.0.0.1 'echo logged-in' 2>"$T/err") &&
        [ "$out" = logged-in ] &&
        grep -q "debug1: Server host certificate: $(cert_type_of "$alg") SHA256:" "$T/err" &&
        grep -q "is known and matches the .*-CERT host certificate." "$T/err" &&
        grep -q "kex: host key algorithm: $alg" "$T/err" || { cat "$T/err" >&2; return 1; }
}
for alg in "${cert_algs[@]}"; do
    lh_check "Debian's ssh -> Longhaul's sshd: $alg" debian_to_longhaul "$alg"
done
lh_check "Debian's ssh -> Longhaul's sshd: [host]:* pattern" debian_to_longhaul ssh-ed25519-cert-v01@openssh.com "$T/kh_ca_port"

# Debian's ssh with its default HostKeyAlgorithms picks the certificate.
debian_default() {
    ssh $(opts "$T/kh_ca" "$lh_port_") -v 127.0.0.1 true 2>"$T/err" &&
        grep -q "kex: host key algorithm: ssh-ed25519-cert-v01@openssh.com" "$T/err" || { cat "$T/err" >&2; return 1; }
}
lh_check "Debian's ssh default algorithms choose Longhaul's certificate" debian_default

debian_refused_wrong_ca() {
    ! ssh $(opts "$T/kh_other" "$lh_port_") -v 127.0.0.1 true 2>"$T/err" &&
        grep -q "No matching CA found. Retry with plain key" "$T/err" &&
        grep -q "Host key verification failed." "$T/err" || { cat "$T/err" >&2; return 1; }
}
lh_check "Debian's ssh refuses Longhaul's certificate from an unknown CA" debian_refused_wrong_ca

# Without HostCertificate nothing about the offer changes.
cp -r "$T/lh" "$T/lh_plain"
plain_offer() {
    local plain_port
    lh_port plain_port
    LH_SSHD=$OUR_SSHD
    lh_start_sshd "$T/lh_plain" "$plain_port" "UsePAM no"
    LH_SSHD=$DEB_SSHD
    # Refused (no CA for a plain key), but the server's offer is logged.
    ! ssh $(opts "$T/kh_ca" "$plain_port") -vv 127.0.0.1 true 2>"$T/err" &&
        grep -A3 "peer server KEXINIT proposal" "$T/err" | lh_matches "host key algorithms: " &&
        ! grep -A3 "peer server KEXINIT proposal" "$T/err" | grep "host key algorithms: " | lh_matches cert ||
        { cat "$T/err" >&2; return 1; }
}
lh_check "Longhaul's sshd without HostCertificate offers no certificate" plain_offer

stray_logged() {
    grep -q "No matching private key for certificate: $T/stray_key-cert.pub" "$T/lh/sshd.log" ||
        { cat "$T/lh/sshd.log" >&2; return 1; }
}
lh_check "Longhaul's sshd logs a certificate for no loaded key" stray_logged

dump_hostcert() {
    local conf=$T/dump_config
    printf 'HostKey %s\nHostCertificate %s\nHostCertificate relative-cert.pub\n' \
        "$T/lh/ssh_host_ed25519_key" "$T/lh/ssh_host_ed25519_key-cert.pub" >"$conf"
    diff <("$DEB_SSHD" -T -f "$conf" 2>/dev/null | grep -i '^hostcertificate') \
        <("$OUR_SSHD" -T -f "$conf" | grep -i '^hostcertificate')
}
lh_check "sshd -T prints hostcertificate as Debian's does" dump_hostcert

# sshd -T's hostkeyalgorithms: the configured list, certificate algorithms
# and all, as Debian's prints it (less the security-key ones, which our
# sshd cannot serve), by default and as configured.
dump_hostkeyalgorithms() {
    local conf=$T/dump_algs_config spec
    for spec in "" "HostKeyAlgorithms ssh-ed25519,sk-ssh-ed25519@openssh.com,rsa-sha2-256-cert-v01@openssh.com" \
        "HostKeyAlgorithms -*-cert-v01@openssh.com" "HostKeyAlgorithms ^rsa-sha2-512-cert-v01@openssh.com"; do
        printf 'HostKey %s\n%s\n' "$T/lh/ssh_host_ed25519_key" "$spec" >"$conf"
        diff <("$DEB_SSHD" -T -f "$conf" 2>/dev/null | grep -i '^hostkeyalgorithms' | sed -e 's/sk-[^,]*,//g; s/,sk-[^,]*$//') \
            <("$OUR_SSHD" -T -f "$conf" | grep -i '^hostkeyalgorithms') || { echo "   with '$spec'"; return 1; }
    done
}
lh_check "sshd -T prints hostkeyalgorithms as Debian's does (certificates in, security keys out)" dump_hostkeyalgorithms

# sshd -t reports unusable HostCertificate files in Debian's words.
test_messages() {
    local conf=$T/test_config
    {
        echo "HostKey $T/lh/ssh_host_ed25519_key"
        echo "HostCertificate $T/stray_key-cert.pub"      # certifies no loaded key
        echo "HostCertificate $T/lh/ssh_host_ed25519_key.pub" # a plain key
        echo "HostCertificate $T/missing-cert.pub"
        echo "HostCertificate $T/kh_ca"                    # no key line (nor kh_ca.pub)
        echo "HostCertificate $T/lh/ssh_host_ed25519_key-cert" # found as ...-cert.pub
    } >"$conf"
    # (Both end their stderr lines with CR LF, as OpenSSH's log.c does.)
    diff <("$DEB_SSHD" -t -f "$conf" 2>&1) <("$OUR_SSHD" -t -f "$conf" 2>&1)
}
lh_check "sshd -t logs unusable certificates as Debian's" test_messages

# ---------------------------------------------------------------- Longhaul's ssh -> Debian's sshd
# The lines both clients print about the host key, with the port made neutral.
host_key_lines() {
    grep -E "Server host (certificate|key):|is known and matches|Found (CA )?key in|No matching CA|Certificate invalid|Certificate for|check_host_cert|host key is known for|requested strict checking|Host key verification failed|Retry with plain|checking without port|found matching key|marked as revoked|was revoked|revoked by file" "$1" |
        sed -e 's/\r$//'
}
compare_with_debian() { # PORT KNOWN_HOSTS WANT_STATUS [ssh args...]
    local port=$1 kh=$2 want=$3 rc_ours rc_deb
    shift 3
    "$SSH" $(opts "$kh" "$port") -v "$@" 127.0.0.1 true 2>"$T/ours.err"
    rc_ours=$?
    ssh $(opts "$kh" "$port") -v "$@" 127.0.0.1 true 2>"$T/deb.err"
    rc_deb=$?
    [ "$rc_ours" = "$want" ] && [ "$rc_deb" = "$want" ] &&
        diff <(host_key_lines "$T/deb.err") <(host_key_lines "$T/ours.err") ||
        { echo "ours: $rc_ours, Debian's: $rc_deb, wanted $want" >&2; cat "$T/ours.err" >&2; return 1; }
}
for alg in "${cert_algs[@]}"; do
    lh_check "Longhaul's ssh -> Debian's sshd: $alg" compare_with_debian "$deb_port" "$T/kh_ca" 0 -o "HostKeyAlgorithms=$alg"
done
lh_check "Longhaul's ssh -> Debian's sshd: default algorithms" compare_with_debian "$deb_port" "$T/kh_ca" 0
lh_check "Longhaul's ssh -> Debian's sshd: [host]:* pattern" compare_with_debian "$deb_port" "$T/kh_ca_port" 0
lh_check "Longhaul's ssh -> Longhaul's sshd: certificate" compare_with_debian "$lh_port_" "$T/kh_ca" 0
lh_check "refused: CA not in known_hosts" compare_with_debian "$deb_port" "$T/kh_other" 255
lh_check "refused: host name not a principal" compare_with_debian "$bad_port" "$T/kh_ca" 255
lh_check "refused: @revoked CA" compare_with_debian "$deb_port" "$T/kh_revoked" 255
echo "$(cat "$T/ca.pub")" >"$T/revoked_ca"
lh_check "refused: RevokedHostKeys lists the CA" compare_with_debian "$deb_port" "$T/kh_ca" 255 \
    -o "RevokedHostKeys=$T/revoked_ca"
# KRLs: the ed25519 certificate (serial 101, ID "host ed25519") revoked by
# serial or by key ID in its CA's section; another serial leaves it alone.
"$KG" -q -k -f "$T/krl_serial" -s "$T/ca.pub" <(echo "serial: 101")
"$KG" -q -k -f "$T/krl_id" -s "$T/ca.pub" <(echo "id: host ed25519")
"$KG" -q -k -f "$T/krl_other" -s "$T/ca.pub" <(echo "serial: 102")
ed_cert=(-o HostKeyAlgorithms=ssh-ed25519-cert-v01@openssh.com)
lh_check "refused: KRL revokes the certificate's serial" compare_with_debian "$deb_port" "$T/kh_ca" 255 \
    "${ed_cert[@]}" -o "RevokedHostKeys=$T/krl_serial"
lh_check "refused: KRL revokes the certificate's key ID" compare_with_debian "$deb_port" "$T/kh_ca" 255 \
    "${ed_cert[@]}" -o "RevokedHostKeys=$T/krl_id"
lh_check "KRL revoking another serial" compare_with_debian "$deb_port" "$T/kh_ca" 0 \
    "${ed_cert[@]}" -o "RevokedHostKeys=$T/krl_other"
lh_check "RSA CA with rsa-sha2-256" compare_with_debian "$rsaca_port" "$T/kh_rsa" 0 \
    -o HostKeyAlgorithms=ssh-ed25519-cert-v01@openssh.com
lh_check "refused: CASignatureAlgorithms leaves out the CA's" compare_with_debian "$rsaca_port" "$T/kh_rsa" 255 \
    -o HostKeyAlgorithms=ssh-ed25519-cert-v01@openssh.com -o CASignatureAlgorithms=ssh-ed25519
lh_check "sk-ssh-ed25519 CA, default CASignatureAlgorithms" compare_with_debian "$skca_port" "$T/kh_skca" 0 \
    -o HostKeyAlgorithms=ssh-ed25519-cert-v01@openssh.com
lh_check "sk-ecdsa-sha2-nistp256 CA, default CASignatureAlgorithms" compare_with_debian "$skca_port" "$T/kh_skca" 0 \
    -o HostKeyAlgorithms=ecdsa-sha2-nistp256-cert-v01@openssh.com
lh_check "refused: CASignatureAlgorithms -sk-* leaves out the security-key CA" compare_with_debian "$skca_port" \
    "$T/kh_skca" 255 -o HostKeyAlgorithms=ssh-ed25519-cert-v01@openssh.com -o "CASignatureAlgorithms=-sk-*"

# Refused as a certificate but known as a plain key: accepted as that.
plain_fallback() {
    { cat "$T/kh_other"; echo "[127.0.0.1]:$deb_port $(cut -d' ' -f1,2 "$T/deb/ssh_host_ed25519_key.pub")"; } >"$T/kh_plain"
    compare_with_debian "$deb_port" "$T/kh_plain" 0 -o HostKeyAlgorithms=ssh-ed25519-cert-v01@openssh.com
}
lh_check "refused certificate, known plain key: accepted" plain_fallback

# A key that Debian's ssh-agent may use only for this host (ssh-add -h,
# the host known through its @cert-authority line): the agent signs only
# when session-bind@openssh.com names the host certificate the host
# presented, as OpenSSH's ssh sends it.
agent_bound_to_ca() {
    local out
    (
        eval "$(ssh-agent -s -a "$T/agent.sock")" >/dev/null || exit 1
        trap 'kill "$SSH_AGENT_PID" 2>/dev/null' EXIT
        ssh-add -q -H "$T/kh_ca" -h 127.0.0.1 "$T/id_ed25519" 2>/dev/null || exit 1
        for client in ssh "$SSH"; do
            out=$("$client" -F /dev/null -p "$lh_port_" -o "UserKnownHostsFile=$T/kh_ca" \
                -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes \
                -o "IdentityAgent=$T/agent.sock" -o HostKeyAlgorithms=ssh-ed25519-cert-v01@openssh.com \
                127.0.0.1 'echo agent-ok' 2>"$T/agent.err")
            [ "$out" = agent-ok ] || { echo "$client:" >&2; cat "$T/agent.err" >&2; exit 1; }
        done
    )
}
if command -v ssh-agent >/dev/null && command -v ssh-add >/dev/null; then
    lh_check "ssh-agent key bound to the host by its CA (ssh-add -h): session-bind names the certificate" agent_bound_to_ca
else
    lh_skip_check "agent key bound by CA" "OpenSSH's ssh-agent and ssh-add not found"
fi

# ssh -G: HostKeyAlgorithms as Debian's.
# (Security-key host keys, sk-*, are not supported by our ssh: their names
# are left out. Security keys for user authentication are, elsewhere.)
ssh_g() {
    diff <(ssh -G -F /dev/null h | grep '^hostkeyalgorithms' | sed -e 's/sk-[^,]*,//g') \
        <("$SSH" -G -F /dev/null h | grep '^hostkeyalgorithms')
}
lh_check "ssh -G hostkeyalgorithms as Debian's" ssh_g

lh_summary
