#!/usr/bin/env bash
# User certificates in Longhaul's sshd, with Debian's ssh and ssh-keygen:
# certificates made by ssh-keygen -s (Ed25519, and RSA signing with
# rsa-sha2-512) log in through TrustedUserCAKeys, through cert-authority
# lines in authorized_keys (with and without principals=) and through
# AuthorizedPrincipalsFile (whose line options apply); expired
# certificates, wrong principals, a serial revoked in a KRL made by
# ssh-keygen -k, a source-address elsewhere are refused; force-command
# and a certificate without permit-pty are honoured;
# AuthorizedPrincipalsCommand (with its tokens) and AuthorizedKeysCommand
# printing cert-authority lines authorise certificates. Log lines as
# OpenSSH 9.2's sshd writes them.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
LH_SSHD=$BUILD/bin/sshd
[ -x "$LH_SSHD" ] || lh_fail "sshd not built ($LH_SSHD)"
command -v ssh >/dev/null || lh_skip "OpenSSH's ssh client not found"
[ -x "$LH_SSH_KEYGEN" ] || lh_skip "ssh-keygen not found"
T=$LH_TMP
chmod 711 "$T"

# A test user when root (its sessions run as that user), else ourselves.
if [ "$(id -u)" = 0 ]; then
    lh_make_user "pw-$RANDOM-$RANDOM"
    user=$LH_USER
else
    user=$(id -un)
fi

kg() { "$LH_SSH_KEYGEN" -q "$@"; }
kg -t ed25519 -N '' -C "user CA" -f "$T/ca"
kg -t rsa -b 2048 -N '' -C "user RSA CA" -f "$T/rsa_ca"
kg -t ed25519 -N '' -f "$T/id_ed"
kg -t rsa -b 2048 -N '' -f "$T/id_rsa"
# sign NAME KEY CA [ssh-keygen -s options]: $T/NAME-cert.pub, for $T/KEY's public key.
sign() {
    local name=$1 key=$2 ca=$3
    shift 3
    cp "$T/$key.pub" "$T/$name.pub"
    kg -s "$T/$ca" "$@" "$T/$name.pub"
    rm -f "$T/$name.pub"
}
sign ed id_ed ca -I "alice@longhaul" -n "$user" -z 42
sign rsa id_rsa rsa_ca -t rsa-sha2-512 -I "rsa user" -n "$user" -z 7
sign expired id_ed ca -I expired -n "$user" -V 20000101:20010101
sign wrongp id_ed ca -I wrongp -n "someone-else" -z 5
sign revoked id_ed ca -I revoked -n "$user" -z 1234
sign srcaddr id_ed ca -I srcaddr -n "$user" -O source-address=10.9.8.0/24
sign forced id_ed ca -I forced -n "$user" -O "force-command=echo forced-by-cert"
sign nopty id_ed ca -I nopty -n "$user" -O no-pty
sign staff id_ed rsa_ca -t rsa-sha2-512 -I staff -n "staff-$user" -z 99
sign tokens id_ed ca -I tok -n "$user-tok-77-ssh-ed25519" -z 77
echo "serial: 1234" >"$T/krl.spec"
kg -k -f "$T/krl" -s "$T/ca.pub" "$T/krl.spec"
cat "$T/ca.pub" "$T/rsa_ca.pub" >"$T/user_ca.pub"
chmod 600 "$T"/id_* "$T"/ca "$T"/rsa_ca
chmod 644 "$T"/*.pub "$T/krl"

fp() { "$LH_SSH_KEYGEN" -l -f "$1" | cut -d' ' -f2; }
fp_ed=$(fp "$T/id_ed.pub")
fp_rsa=$(fp "$T/id_rsa.pub")
fp_ca=$(fp "$T/ca.pub")
fp_rsa_ca=$(fp "$T/rsa_ca.pub")

# server NAME [sshd_config lines...]: a Longhaul sshd in $T/NAME, port in port_NAME.
server() {
    local name=$1 d="$T/srv-$1" p
    shift
    mkdir -p "$d" && chmod 711 "$d"
    lh_make_host_keys "$d"
    lh_port p
    lh_start_sshd "$d" "$p" "$@"
    lh_known_hosts "$d" "$p"
    printf -v "port_$name" %s "$p"
}
: >"$T/no_keys"
chmod 644 "$T/no_keys"
mkdir -p "$T/principals" && chmod 755 "$T/principals"
echo "command=\"echo from-principals\" staff-$user" >"$T/principals/$user"
chmod 644 "$T/principals/$user"
server ca "TrustedUserCAKeys $T/user_ca.pub" "AuthorizedKeysFile $T/no_keys" "RevokedKeys $T/krl"
server ak "TrustedUserCAKeys none" "AuthorizedKeysFile $T/ak/authorized_keys"
mkdir -p "$T/ak" && chmod 755 "$T/ak"
{
    echo "cert-authority $(cat "$T/ca.pub")"
    echo "cert-authority,principals=\"x,staff-$user\" $(cat "$T/rsa_ca.pub")"
} >"$T/ak/authorized_keys"
chmod 644 "$T/ak/authorized_keys"
server pf "TrustedUserCAKeys $T/user_ca.pub" "AuthorizedKeysFile $T/no_keys" \
    "AuthorizedPrincipalsFile $T/principals/%u"

# The commands sshd runs must be root's, in directories only root can
# write (OpenSSH's checks): files in /run, removed on exit.
if [ "$(id -u)" = 0 ]; then
    commands=yes
    pcmd=/run/lh-principals-$$-$RANDOM.sh
    kcmd=/run/lh-keys-$$-$RANDOM.sh
    LH_CLEANUP_FILES+=("$pcmd" "$kcmd")
    # Prints a principal made of the tokens it is given (%u %i %s %T) and the
    # staff principal with a line option, as a principals file would hold.
    cat >"$pcmd" <<EOS
#!/bin/sh
echo "\$1-\$2-\$3-\$4"
echo "command=\\"echo from-principals-command\\" staff-\$1"
EOS
    # cert-authority for the Ed25519 CA, only when asked about a certificate.
    cat >"$kcmd" <<EOS
#!/bin/sh
[ "\$1" = ssh-ed25519-cert-v01@openssh.com ] && echo "cert-authority,principals=\\"\$2\\" $(cat "$T/ca.pub")"
exit 0
EOS
    chmod 755 "$pcmd" "$kcmd"
    server pc "TrustedUserCAKeys $T/user_ca.pub" "AuthorizedKeysFile $T/no_keys" \
        "AuthorizedPrincipalsCommand $pcmd %u %i %s %T" "AuthorizedPrincipalsCommandUser nobody"
    server kc "TrustedUserCAKeys none" "AuthorizedKeysFile $T/no_keys" \
        "AuthorizedKeysCommand $kcmd %t %u" "AuthorizedKeysCommandUser %u"
fi

# login SERVER KEY CERT COMMAND [ssh args...]: the command's output.
login() {
    local srv=$1 key=$2 cert=$3 cmd=$4 port
    shift 4
    port=port_$srv
    lh_ssh_to "$T/srv-$srv" "${!port}" "$T/$key" -o "CertificateFile=$T/$cert-cert.pub" "$@" "$user@127.0.0.1" "$cmd"
}
logged() { grep -qF -- "$2" "$T/srv-$1/sshd.log"; }
# The log line a refusal writes can follow the client's exit by a moment.
logged_soon() { lh_wait_until 5 logged "$@"; }
refused() { ! login "$1" "$2" "$3" true </dev/null 2>/dev/null; }

# ---------------------------------------------------------------- TrustedUserCAKeys
check_ed25519() {
    [ "$(login ca id_ed ed 'echo ok; whoami' </dev/null)" = "$(printf 'ok\n%s' "$user")" ] &&
        logged_soon ca "ssh2: ED25519-CERT $fp_ed ID alice@longhaul (serial 42) CA ED25519 $fp_ca" &&
        logged ca "Accepted publickey for $user from 127.0.0.1 port" &&
        logged ca "Accepted certificate ID \"alice@longhaul\" (serial 42) signed by ED25519 CA $fp_ca via $T/user_ca.pub"
}
lh_check "TrustedUserCAKeys: Ed25519 certificate logs in, logged as OpenSSH" check_ed25519
check_rsa512() {
    [ "$(login ca id_rsa rsa 'echo ok' -o PubkeyAcceptedAlgorithms=rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-512 </dev/null)" = ok ] &&
        logged_soon ca "ssh2: RSA-CERT $fp_rsa ID rsa user (serial 7) CA RSA $fp_rsa_ca"
}
lh_check "TrustedUserCAKeys: RSA certificate with rsa-sha2-512-cert-v01@openssh.com" check_rsa512
check_expired() {
    refused ca id_ed expired && logged_soon ca "Certificate invalid: expired"
}
lh_check "expired certificate refused" check_expired
check_wrong_principal() {
    refused ca id_ed wrongp && logged_soon ca "Certificate invalid: name is not a listed principal"
}
lh_check "certificate for another principal refused" check_wrong_principal
check_revoked() {
    refused ca id_ed revoked &&
        logged_soon ca "Authentication key ED25519-CERT $fp_ed revoked by file $T/krl"
}
lh_check "serial revoked in a KRL (ssh-keygen -k -s) refused" check_revoked
check_source_address() {
    refused ca id_ed srcaddr &&
        logged_soon ca "cert: Authentication tried for $user with valid certificate but not from a permitted source address (127.0.0.1)." &&
        logged ca "Refused by certificate options"
}
lh_check "source-address elsewhere refused" check_source_address
check_force_command() {
    [ "$(login ca id_ed forced 'echo other' </dev/null)" = forced-by-cert ]
}
lh_check "force-command runs instead of the client's command" check_force_command
check_no_pty() {
    local out
    out=$(lh_in_pty "ssh -F /dev/null -p $port_ca -o UserKnownHostsFile=$T/srv-ca/known_hosts.$port_ca \
        -o StrictHostKeyChecking=yes -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none \
        -i $T/id_ed -o CertificateFile=$T/nopty-cert.pub -tt $user@127.0.0.1 tty")
    echo "$out" | grep -q "PTY allocation request failed on channel 0" &&
        [ "$(login ca id_ed nopty 'echo no-pty-ok' </dev/null)" = no-pty-ok ]
}
lh_check "certificate without permit-pty: no pty" check_no_pty

# ---------------------------------------------------------------- cert-authority lines
check_ak_ca() {
    [ "$(login ak id_ed ed 'echo ok' </dev/null)" = ok ] &&
        logged_soon ak "Accepted certificate ID \"alice@longhaul\" (serial 42) signed by CA ED25519 $fp_ca found at $T/ak/authorized_keys:1" &&
        logged ak "ssh2: ED25519-CERT $fp_ed ID alice@longhaul (serial 42) CA ED25519 $fp_ca"
}
lh_check "authorized_keys cert-authority: the user's name as principal" check_ak_ca
check_ak_principals() {
    [ "$(login ak id_ed staff 'echo ok' </dev/null)" = ok ] &&
        refused ak id_rsa rsa &&
        logged_soon ak "Certificate does not contain an authorized principal"
}
lh_check "authorized_keys cert-authority,principals=" check_ak_principals
check_ak_expired() {
    refused ak id_ed expired && logged_soon ak "Certificate invalid: expired"
}
lh_check "authorized_keys cert-authority: expired certificate refused" check_ak_expired

# ---------------------------------------------------------------- AuthorizedPrincipalsFile
check_principals_file() {
    # The line's command= applies; a certificate naming only the user is refused.
    [ "$(login pf id_ed staff 'echo other' </dev/null)" = from-principals ] &&
        logged_soon pf "Accepted certificate ID \"staff\" (serial 99) signed by RSA CA $fp_rsa_ca via $T/user_ca.pub" &&
        refused pf id_ed ed &&
        logged_soon pf "Certificate does not contain an authorized principal"
}
lh_check "AuthorizedPrincipalsFile (%u) with line options" check_principals_file

# ---------------------------------------------------------------- the commands
check_principals_command() {
    # The principal the command built from %u %i %s %T; then a line's option.
    [ "$(login pc id_ed tokens 'echo ok' </dev/null)" = ok ] &&
        logged_soon pc "Accepted certificate ID \"tok\" (serial 77) signed by ED25519 CA $fp_ca via $T/user_ca.pub" &&
        [ "$(login pc id_ed staff 'echo other' </dev/null)" = from-principals-command ] &&
        refused pc id_ed ed &&
        logged_soon pc "Certificate does not contain an authorized principal"
}
check_keys_command() {
    # %t is the certificate's type; the line names the user as principal.
    [ "$(login kc id_ed ed 'echo ok' </dev/null)" = ok ] &&
        logged_soon kc "Accepted certificate ID \"alice@longhaul\" (serial 42) signed by CA ED25519 $fp_ca found at $kcmd %t %u:1" &&
        refused kc id_rsa rsa
}
if [ "${commands:-}" = yes ]; then
    lh_check "AuthorizedPrincipalsCommand (%u %i %s %T) with line options" check_principals_command
    lh_check "AuthorizedKeysCommand printing cert-authority for a certificate" check_keys_command
else
    lh_skip_check "AuthorizedPrincipalsCommand" "sshd runs commands only as root (they must be root's)"
    lh_skip_check "AuthorizedKeysCommand for certificates" "sshd runs commands only as root (they must be root's)"
fi

lh_summary
