#!/usr/bin/env bash
# Longhaul's transport core and Asio driver against Debian's OpenSSH sshd:
# every kex x host key x cipher x MAC that both implement completes key
# exchange, proves the expected host key, gets SERVICE_ACCEPT for
# ssh-userauth, logs in with a key (sshd refuses KEXINIT before that), asks
# for two rekeys and sees sshd start a third itself (RekeyLimit 1M).
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

lh_make_host_keys "$LH_TMP"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$LH_TMP/id_ed25519"
cp "$LH_TMP/id_ed25519.pub" "$LH_TMP/authorized_keys"
port=$("$PROBE" --free-port)
lh_start_sshd "$LH_TMP" "$port" \
    "KexAlgorithms $kex" "Ciphers $ciphers" "MACs $macs" "HostKeyAlgorithms $hostkeys" "RekeyLimit 1M"

"$PROBE" --port "$port" --host-key-dir "$LH_TMP" --matrix --rekeys 2 --jobs 4 \
    --user "$(id -un)" --identity "$LH_TMP/id_ed25519" --server-rekey-bytes 1100000 \
    --server-kex "$kex" --server-hostkeys "$hostkeys" --server-ciphers "$ciphers" --server-macs "$macs" \
    | tee "$LH_TMP/probe.log" | grep -v '^ok ' || true
status=${PIPESTATUS[0]}

if [ "$status" != 0 ]; then
    echo "--- sshd log (last 40 lines) ---" >&2
    tail -n 40 "$LH_TMP/sshd.log" >&2
    lh_fail "transport interop failures"
fi
# Every combination must have seen both kinds of rekey under strict kex.
if grep '^ok ' "$LH_TMP/probe.log" | grep -v -q 'client-initiated rekeys 2, server-initiated 1) strict=1'; then
    lh_fail "a combination passed without the expected rekeys or strict kex"
fi
echo "PASS"
