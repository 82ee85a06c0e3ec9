#!/bin/bash
# wan_limits.sh: what the emulator itself can do on this machine. For each
# RTT x rate x offload setting x direction: ping RTT against the configured
# one, iperf3 goodput after ramp-up against the configured rate, the
# emulator's CPU and its worst lateness. Prints a Markdown table.
#
#   contrib/bench/wan_limits.sh [--rtts "0 50 200"] [--rates "100 1000 2000 5000"]
#                               [--offload "on off"] [--dirs "up down"]
#                               [--loss PCT] [--seconds 10] [--omit 3]
#
# --dirs: up = client -> server, down = server -> client (iperf3 -R); each
# direction gets its own link. --loss: random loss (% per packet) on the
# link, as contrib/bench/wan --loss.
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=regress/wan_lib.sh
source "$bench_dir/../../regress/wan_lib.sh"

rtts="0 50 200"
rates="100 1000 2000 5000"
offloads="on off"
dirs="up down"
loss=0
seconds=10
omit=3
while (($#)); do
    case $1 in
        --rtts) rtts=$2; shift 2 ;;
        --rates) rates=$2; shift 2 ;;
        --offload) offloads=$2; shift 2 ;;
        --dirs) dirs=$2; shift 2 ;;
        --loss) loss=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --omit) omit=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "wan_limits: unknown option $1" >&2; exit 2 ;;
    esac
done

wan_require iperf3 ping ss
wan_install_trap
tmp=$(mktemp -d /tmp/lhw-wan-limits.XXXXXX)
wan_on_exit "rm -rf -- '$tmp'"

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for d in $dirs; do [[ $d == up || $d == down ]] || { echo "wan_limits: --dirs takes up and/or down" >&2; exit 2; }; done
loss_args=()
awk -v l="$loss" 'BEGIN { exit !(l > 0) }' && loss_args=(--loss "$loss")
echo "| offload | dir | loss % | RTT ms | ping ms | rate Mbit/s | iperf3 Mbit/s | % of rate | retransmits | wanem CPU % | wanem late max ms | load |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
n=0
for off in $offloads; do
    for rtt in $rtts; do
        for rate in $rates; do
            for dir in $dirs; do
                n=$((n + 1))
                reverse=()
                [[ $dir == down ]] && reverse=(-R)
                wan_up "l$$n$n" --rtt-ms "$rtt" --rate-mbit "$rate" --offload "$off" "${loss_args[@]}" 2>/dev/null
                ping_avg=$(wan_client ping -q -c 10 -i 0.05 "$WAN_SERVER_ADDR" | awk -F/ '/^rtt/ { print $5 }')
                ip netns exec "$WAN_NS_SERVER" iperf3 -s -1 -B "$WAN_SERVER_ADDR" -p 5201 >/dev/null 2>&1 &
                wan_wait_listen 5201
                c0=$("$WAN_METER" cpu "$WAN_WANEM_PID" | sed -n 's/.*"total_s": \([0-9.]*\).*/\1/p')
                t0=$(date +%s.%N)
                wan_client iperf3 -c "$WAN_SERVER_ADDR" -p 5201 -t "$seconds" -O "$omit" -f m "${reverse[@]}" >"$tmp/iperf.txt" 2>&1 || true
                t1=$(date +%s.%N)
                c1=$("$WAN_METER" cpu "$WAN_WANEM_PID" | sed -n 's/.*"total_s": \([0-9.]*\).*/\1/p')
                wait || true
                got=$(awk '/receiver/ { for (i = 1; i < NF; i++) if ($(i + 1) == "Mbits/sec") print $i }' "$tmp/iperf.txt")
                retr=$(awk '/sender/ { print $(NF - 1) }' "$tmp/iperf.txt")
                "$WANEM_NET" stats "l$$n$n" >"$tmp/stats.txt" 2>&1 || true
                late=$(awk '/late avg/ { for (i = 1; i <= NF; i++) if ($i == "max") { v = $(i + 1); if (v > m) m = v } } END { printf "%.1f", m / 1000 }' "$tmp/stats.txt")
                printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$off" "$dir" "$loss" "$rtt" "${ping_avg:-?}" "$rate" "${got:-?}" \
                    "$(awk -v g="${got:-0}" -v r="$rate" 'BEGIN { printf "%.0f", 100 * g / r }')" "${retr:-?}" \
                    "$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.0f", 100 * (b - a) / (t1 - t0) }')" \
                    "$late" "$(cut -d' ' -f1 /proc/loadavg)"
                wan_down "l$$n$n" 2>/dev/null
            done
        done
    done
done
