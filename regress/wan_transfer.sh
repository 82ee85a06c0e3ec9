#!/bin/bash
# Checksummed transfers through ssh (cat), scp and sftp, in both directions,
# across the emulated WAN: once on a long clean path, once on a lossy,
# jittery one. Runs every SSH implementation present (OpenSSH from Debian;
# Longhaul's ssh/sshd from the build tree once they exist; more with
# WAN_IMPLS="name:ssh:sshd ..."). Skips (77) without root or TUN.
set -euo pipefail
# shellcheck source=regress/wan_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/wan_lib.sh"

wan_require ssh-keygen useradd userdel sha256sum ss
wan_install_trap

# Link profiles: name, wanem-net options, payload size in MiB.
profiles=(
    "long|--rtt-ms 60 --rate-mbit 200|16"
    "lossy|--rtt-ms 20 --rate-mbit 50 --loss 1 --jitter-ms 2|3"
)

if [[ -n ${WAN_IMPLS:-} ]]; then
    read -r -a impls <<<"$WAN_IMPLS"
else
    mapfile -t impls < <(wan_default_impls)
fi

wan_ssh_prepare
data=$WAN_TMP/data
mkdir -p "$data"
failures=0

# run_ok WHAT CMD...: the command's exit status is a check of its own (a
# transfer that fails after writing every byte is still a failure).
run_ok() {
    local what=$1 rc=0
    shift
    "$@" || rc=$?
    if ((rc != 0)); then
        echo "  FAIL $what: exited $rc" >&2
        failures=$((failures + 1))
    fi
}

check_same() {
    local what=$1 want=$2 file=$3 got
    if [[ ! -f $file ]]; then
        echo "  FAIL $what: $file was not written" >&2
        failures=$((failures + 1))
        return
    fi
    got=$(sha256sum <"$file" | cut -d' ' -f1)
    if [[ $got == "$want" ]]; then
        echo "  ok   $what"
    else
        echo "  FAIL $what: checksum $got, expected $want" >&2
        failures=$((failures + 1))
    fi
    rm -f -- "$file"
}

run_profile() {
    local label=$1 opts=$2 mib=$3 spec=$4
    local src=$data/src-$label.bin sum
    head -c "$((mib << 20))" /dev/urandom >"$src"
    chmod 644 "$src"
    sum=$(sha256sum <"$src" | cut -d' ' -f1)
    local srv=$WAN_TMP/srv

    # shellcheck disable=SC2086
    wan_up "wt$$" $opts
    wan_select_impl "$spec"
    wan_sshd_start
    echo "== $WAN_IMPL over '$label' ($opts), $mib MiB"
    local t0=$SECONDS

    run_ok "ssh cat upload" wan_ssh "cat > $srv/up-ssh.bin" <"$src"
    check_same "ssh cat upload" "$sum" "$srv/up-ssh.bin"
    run_ok "ssh cat download" wan_ssh "cat $src" >"$data/down-ssh.bin"
    check_same "ssh cat download" "$sum" "$data/down-ssh.bin"

    run_ok "scp upload" wan_scp "$src" "wan-server:$srv/up-scp.bin"
    check_same "scp upload" "$sum" "$srv/up-scp.bin"
    run_ok "scp download" wan_scp "wan-server:$src" "$data/down-scp.bin"
    check_same "scp download" "$sum" "$data/down-scp.bin"

    printf 'put %s %s\nget %s %s\n' "$src" "$srv/up-sftp.bin" "$src" "$data/down-sftp.bin" >"$data/batch"
    run_ok "sftp -b" wan_sftp -b "$data/batch" wan-server >/dev/null
    check_same "sftp put" "$sum" "$srv/up-sftp.bin"
    check_same "sftp get" "$sum" "$data/down-sftp.bin"

    echo "  ($((SECONDS - t0)) s)"
    wan_sshd_stop
    wan_down "wt$$"
    rm -f -- "$src"
}

for spec in "${impls[@]}"; do
    for p in "${profiles[@]}"; do
        IFS='|' read -r label opts mib <<<"$p"
        run_profile "$label" "$opts" "$mib" "$spec"
    done
done

if ((failures)); then
    echo "wan_transfer: $failures check(s) failed" >&2
    exit 1
fi
echo "wan_transfer: all transfers intact"
