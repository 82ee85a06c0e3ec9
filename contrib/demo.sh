#!/usr/bin/env bash
# The main job: start an sshd on 127.0.0.1 with fresh host keys, connect with
# Longhaul, and move data through ssh and scp, checksummed.
#
# Longhaul's own programs are used from build/bin: sshd, ssh and scp (OpenSSH's
# scp over Longhaul's ssh, scp -S, where Longhaul's scp is not built); the demo
# also shows the transport core alone completing key exchange, login and
# rekeys against the server.
source "$(dirname "$0")/../regress/lib.sh"
BUILD=${LONGHAUL_BUILD_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build}
SIZE_MB=${DEMO_SIZE_MB:-256}

lh_require_openssh_server
if [ -x "$BUILD/bin/sshd" ]; then LH_SSHD=$BUILD/bin/sshd; fi
if [ -x "$BUILD/bin/ssh" ]; then SSH=$BUILD/bin/ssh; else SSH=/usr/bin/ssh; fi
if [ -x "$BUILD/bin/scp" ]; then SCP=$BUILD/bin/scp; SCP_SSH=(); else SCP=/usr/bin/scp; SCP_SSH=(-S "$SSH"); fi

echo "== fresh host keys and a user key in $LH_TMP"
lh_make_host_keys "$LH_TMP"
"$LH_SSH_KEYGEN" -q -t ed25519 -N '' -f "$LH_TMP/id_ed25519"
cp "$LH_TMP/id_ed25519.pub" "$LH_TMP/authorized_keys"
port=$("$BUILD/regress/kex_probe" --free-port)
lh_start_sshd "$LH_TMP" "$port"
echo "== sshd ($LH_SSHD) listening on 127.0.0.1:$port"

echo "== Longhaul transport core: key exchange, login, rekeys"
"$BUILD/regress/kex_probe" --port "$port" --host-key-dir "$LH_TMP" --kex curve25519-sha256 \
    --hostkey ssh-ed25519 --cipher chacha20-poly1305@openssh.com --rekeys 2 \
    --user "$(id -un)" --identity "$LH_TMP/id_ed25519"

[ "$SSH" = /usr/bin/ssh ] && echo "== note: Longhaul's ssh is not built; moving data with OpenSSH's ssh/scp"
[ "$LH_SSHD" = /usr/sbin/sshd ] && echo "== note: Longhaul's sshd is not built; serving with OpenSSH's sshd"
echo "== ssh: $SSH, scp: $SCP ${SCP_SSH[*]}"
ssh_opts=(-F /dev/null -p "$port" -i "$LH_TMP/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes
          -o StrictHostKeyChecking=no -o "UserKnownHostsFile=$LH_TMP/known_hosts" -o LogLevel=ERROR)
head -c "${SIZE_MB}M" /dev/urandom >"$LH_TMP/payload"
want=$(sha256sum <"$LH_TMP/payload" | cut -d' ' -f1)

start=$(date +%s.%N)
got=$("$SSH" "${ssh_opts[@]}" 127.0.0.1 'sha256sum' <"$LH_TMP/payload" | cut -d' ' -f1)
end=$(date +%s.%N)
[ "$got" = "$want" ] || lh_fail "ssh: checksum mismatch"
echo "== ssh: ${SIZE_MB} MiB through 'ssh host sha256sum' in $(awk "BEGIN{printf \"%.2f\", $end - $start}") s, checksum ok"

start=$(date +%s.%N)
"$SCP" "${SCP_SSH[@]}" -q -P "$port" -i "$LH_TMP/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
    -o "UserKnownHostsFile=$LH_TMP/known_hosts" "$LH_TMP/payload" "127.0.0.1:$LH_TMP/copy"
end=$(date +%s.%N)
got=$(sha256sum <"$LH_TMP/copy" | cut -d' ' -f1)
[ "$got" = "$want" ] || lh_fail "scp: checksum mismatch"
echo "== scp: ${SIZE_MB} MiB in $(awk "BEGIN{printf \"%.2f\", $end - $start}") s, checksum ok"
echo "== demo done"
