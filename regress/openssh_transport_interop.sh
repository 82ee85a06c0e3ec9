#!/usr/bin/env bash
# Longhaul's transport core and Asio driver against Debian's OpenSSH sshd:
# every kex x host key x cipher x MAC that both implement completes key
# exchange, proves the expected host key, gets SERVICE_ACCEPT for
# ssh-userauth, logs in with a key (sshd refuses KEXINIT before that), asks
# for two rekeys and sees sshd start a third itself (RekeyLimit 1M).
# By default a pairwise-covering subset of the combinations runs (every kex,
# host key and cipher suite meets each other at least once); LH_FULL_MATRIX=1
# runs them all.
# Then the programs, for the MACs only Longhaul's own code computes (UMAC):
# Debian's ssh -> Longhaul's sshd and Longhaul's ssh -> Debian's sshd, each
# UMAC name with a CTR cipher, a checksummed payload up and down.
source "$(dirname "$0")/lib.sh"

BUILD=${LONGHAUL_BUILD_DIR:?LONGHAUL_BUILD_DIR must point at the build directory}
PROBE=$BUILD/regress/kex_probe
[ -x "$PROBE" ] || lh_fail "kex_probe not built ($PROBE)"
lh_require_openssh_server
command -v ssh >/dev/null || lh_skip "OpenSSH client (ssh -Q) not found"

# What this OpenSSH build implements; sshd is configured to offer all of it.
kex=$(ssh -Q kex | paste -sd,)
ciphers=$(ssh -Q cipher | paste -sd,)
macs=$(ssh -Q mac | paste -sd,)
hostkeys=$(ssh -Q key-sig | grep -v -e cert -e sk- | paste -sd,)

# What Longhaul's transport must negotiate with it: all of the above except
# the legacy algorithms it leaves out on purpose. The
# probe only tries what both sides implement, so this list is what lets the
# test fail when an algorithm goes missing from the transport.
not_implemented='^(diffie-hellman-group1-sha1|diffie-hellman-group14-sha1|diffie-hellman-group-exchange-sha1|3des-cbc|aes(128|192|256)-cbc|hmac-md5.*|hmac-sha1-96.*|ssh-dss)$'
expect() { tr ',' '\n' <<<"$1" | grep -Ev "$not_implemented" || true; }
mapfile -t want_kex < <(expect "$kex")
mapfile -t want_hostkeys < <(expect "$hostkeys")
mapfile -t want_ciphers < <(expect "$ciphers")
mapfile -t want_macs < <(expect "$macs")
aead=0
for c in "${want_ciphers[@]}"; do
    [[ $c == *gcm* || $c == chacha20-poly1305* ]] && aead=$((aead + 1))
done
K=${#want_kex[@]} H=${#want_hostkeys[@]} S=$((aead + (${#want_ciphers[@]} - aead) * ${#want_macs[@]}))
if [ "${LH_FULL_MATRIX:-0}" = 1 ]; then
    mode=--matrix want_total=$((K * H * S))
else
    # kex_probe --pairwise: each kex x suite once, plus a row for each
    # kex x host key or host key x suite pair the rotation cannot reach.
    mode=--pairwise want_total=$((K * S + K * (H > S ? H - S : 0) + S * (H > K ? H - K : 0)))
fi
[ "$want_total" -gt 0 ] || lh_fail "no algorithm combination expected (ssh -Q lists nothing Longhaul implements?)"

lh_make_host_keys "$LH_TMP"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$LH_TMP/id_ed25519"
cp "$LH_TMP/id_ed25519.pub" "$LH_TMP/authorized_keys"
lh_port port
lh_start_sshd "$LH_TMP" "$port" \
    "KexAlgorithms $kex" "Ciphers $ciphers" "MACs $macs" "HostKeyAlgorithms $hostkeys" "RekeyLimit 1M"

# The probe's own status decides; its output is kept whole for the checks below.
status=0
"$PROBE" --port "$port" --host-key-dir "$LH_TMP" "$mode" --rekeys 2 --jobs 4 \
    --user "$(id -un)" --identity "$LH_TMP/id_ed25519" --server-rekey-bytes 1100000 \
    --server-kex "$kex" --server-hostkeys "$hostkeys" --server-ciphers "$ciphers" --server-macs "$macs" \
    >"$LH_TMP/probe.log" 2>&1 || status=$?
grep -v '^ok ' "$LH_TMP/probe.log" || true # what failed, and the probe's summary line

failed=0
fail() {
    echo "FAIL: $*" >&2
    failed=$((failed + 1))
}
[ "$status" = 0 ] || fail "kex_probe exited with status $status"
last=$(tail -n 1 "$LH_TMP/probe.log")
[ "$last" = "$want_total combinations: $want_total passed, 0 failed" ] ||
    fail "expected '$want_total combinations: $want_total passed, 0 failed', the probe said '$last'"
# Every algorithm Longhaul must speak passed in some combination (a label is
# "kex hostkey cipher mac").
for a in "${want_kex[@]}"; do grep -q "^ok   $a " "$LH_TMP/probe.log" || fail "kex $a: no combination passed"; done
for a in "${want_hostkeys[@]}"; do grep -q "^ok   [^ ]* $a " "$LH_TMP/probe.log" || fail "host key $a: no combination passed"; done
for a in "${want_ciphers[@]}"; do grep -q "^ok   [^ ]* [^ ]* $a " "$LH_TMP/probe.log" || fail "cipher $a: no combination passed"; done
for a in "${want_macs[@]}"; do grep -q "^ok   [^ ]* [^ ]* [^ ]* $a:" "$LH_TMP/probe.log" || fail "MAC $a: no combination passed"; done
# Every pair of kex, host key and suite met in a passing combination (the
# label is "kex hostkey cipher mac:"; an AEAD suite's MAC is "-").
missing=$(awk -v kexes="${want_kex[*]}" -v hosts="${want_hostkeys[*]}" '
    $1 == "ok" { kh[$2 " " $3] = 1; hs[$3 " " $4 " " $5] = 1; ks[$2 " " $4 " " $5] = 1; s[$4 " " $5] = 1 }
    END {
        nk = split(kexes, K, " "); nh = split(hosts, H, " ")
        for (i = 1; i <= nk; i++) for (j = 1; j <= nh; j++) if (!((K[i] " " H[j]) in kh)) print K[i] " x " H[j]
        for (x in s) {
            for (j = 1; j <= nh; j++) if (!((H[j] " " x) in hs)) print H[j] " x " x
            for (i = 1; i <= nk; i++) if (!((K[i] " " x) in ks)) print K[i] " x " x
        }
    }' "$LH_TMP/probe.log" | sed 's/:$//')
[ -z "$missing" ] || fail "pairs that met in no passing combination: $(echo "$missing" | head -n 5 | paste -sd';')"
# Every combination must have seen both kinds of rekey under strict kex.
if grep '^ok ' "$LH_TMP/probe.log" | grep -v -q 'client-initiated rekeys 2, server-initiated 1) strict=1'; then
    fail "a combination passed without the expected rekeys or strict kex"
fi

# --- UMAC through ssh and sshd, both ways ------------------------------------
# The probe above is Longhaul's transport against Debian's sshd; this moves
# data through the programs, with Longhaul as either end, so both its sealing
# and its opening of UMAC packets meet OpenSSH's. The -v logs must show the
# MAC negotiated in both directions.
LH_SSH=$BUILD/bin/ssh
LH_SSHD_BIN=$BUILD/bin/sshd
[ -x "$LH_SSH" ] || lh_fail "ssh not built ($LH_SSH)"
[ -x "$LH_SSHD_BIN" ] || lh_fail "sshd not built ($LH_SSHD_BIN)"
UMAC_MB=${LH_UMAC_MB:-4}
head -c "$((UMAC_MB * 1024 * 1024))" /dev/urandom >"$LH_TMP/payload"
want_sum=$(sha256sum <"$LH_TMP/payload" | cut -d' ' -f1)
mkdir -p "$LH_TMP/lh"
cp "$LH_TMP"/ssh_host_* "$LH_TMP/authorized_keys" "$LH_TMP/lh/"
lh_port lh_port_
LH_SSHD=$LH_SSHD_BIN lh_start_sshd "$LH_TMP/lh" "$lh_port_"
lh_known_hosts "$LH_TMP" "$port"
lh_known_hosts "$LH_TMP/lh" "$lh_port_"

# umac_transfer CLIENT(openssh|longhaul) PORT KNOWN_HOSTS CIPHER MAC DIRECTION(up|down)
# MAC "default" leaves both sides' default lists, which OpenSSH heads with
# umac-64-etm@openssh.com: that is what must be negotiated.
umac_transfer() {
    local client=$1 p=$2 kh=$3 cipher=$4 mac=$5 dir=$6 bin=ssh got rc log
    [ "$client" = longhaul ] && bin=$LH_SSH
    log="$LH_TMP/umac.$client.$mac.$cipher.$dir.log"
    local args=(-F /dev/null -p "$p" -o "UserKnownHostsFile=$kh" -o StrictHostKeyChecking=yes -o BatchMode=yes
                -o IdentitiesOnly=yes -o IdentityAgent=none -i "$LH_TMP/id_ed25519" -v -c "$cipher")
    if [ "$mac" = default ]; then
        mac=umac-64-etm@openssh.com
    else
        args+=(-m "$mac")
    fi
    if [ "$dir" = up ]; then
        got=$(timeout 60 "$bin" "${args[@]}" "$(id -un)@127.0.0.1" sha256sum <"$LH_TMP/payload" 2>"$log")
        rc=$?
    else
        got=$(set -o pipefail; timeout 60 "$bin" "${args[@]}" "$(id -un)@127.0.0.1" cat "$LH_TMP/payload" 2>"$log" |
            sha256sum)
        rc=$?
    fi
    got=${got%% *}
    if [ "$rc" != 0 ] || [ "$got" != "$want_sum" ] ||
        ! grep -q "kex: server->client cipher: $cipher MAC: $mac " "$log" ||
        ! grep -q "kex: client->server cipher: $cipher MAC: $mac " "$log"; then
        echo "     exit $rc, digest $got (want $want_sum)" >&2
        tail -n 15 "$log" >&2
        return 1
    fi
}

umac_runs=0
for mac in default umac-64-etm@openssh.com umac-128-etm@openssh.com umac-64@openssh.com umac-128@openssh.com; do
    ciphers_for=(aes128-ctr)
    [ "$mac" = umac-128-etm@openssh.com ] && ciphers_for+=(aes256-ctr)
    for cipher in "${ciphers_for[@]}"; do
        for dir in up down; do
            umac_transfer openssh "$lh_port_" "$LH_TMP/lh/known_hosts.$lh_port_" "$cipher" "$mac" "$dir" ||
                fail "Debian ssh -> Longhaul sshd, $cipher + $mac, $UMAC_MB MiB $dir"
            umac_transfer longhaul "$port" "$LH_TMP/known_hosts.$port" "$cipher" "$mac" "$dir" ||
                fail "Longhaul ssh -> Debian sshd, $cipher + $mac, $UMAC_MB MiB $dir"
            umac_runs=$((umac_runs + 2))
        done
    done
done

if [ "$failed" != 0 ]; then
    echo "--- sshd log (last 40 lines) ---" >&2
    tail -n 40 "$LH_TMP/sshd.log" >&2
    lh_fail "transport interop: $failed problem(s)"
fi
echo "PASS: $want_total combinations; $umac_runs UMAC transfers through ssh and sshd"
