#!/usr/bin/env bash
# Runs libFuzzer targets from their committed corpora (fuzz/corpus/TARGET),
# each for a time or a number of executions, and prints what each did:
#
#   fuzz/run.sh [--time S] [--runs N] [--jobs N] [--build DIR] [--artifacts DIR] [TARGET...]
#
# With both --time and --runs a target stops at whichever comes first
# (issue 12's bar: 10^7 executions or 30 minutes: --runs 10000000 --time 1800).
# --jobs N runs N targets at once (default 1; CI gives one per core).
# Default: every target (fuzz/*_fuzz.cpp), 60 s each. The corpus is copied
# to a temporary directory first, so the repository is never modified (new
# inputs are dropped; fuzz/make_corpora.sh regenerates the committed ones).
# A crash, leak, timeout or out-of-memory stops that target: its log tail is
# printed, the input is kept in the artifacts directory (default
# build-fuzz/artifacts/), and the script exits 1 after the other targets ran.
# The targets are built beforehand:
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DLONGHAUL_FUZZ=ON -DLONGHAUL_TESTS=OFF
#   cmake --build build-fuzz -j"$(nproc)"
# Reproduce a recorded run of docs/FUZZING.md with the same arguments, e.g.
#   fuzz/run.sh --time 600 server_core_fuzz
# (the figures differ from run to run: libFuzzer's mutations are random).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

time_limit=""
runs_limit=""
artifacts=""
jobs=1
targets=()
while [ $# -gt 0 ]; do
    case $1 in
        --time) time_limit=$2; shift 2 ;;
        --runs) runs_limit=$2; shift 2 ;;
        --build) FUZZ_BUILD=$(cd "$2" && pwd); shift 2 ;;
        --artifacts) artifacts=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "fuzz/run.sh: unknown option $1" >&2; exit 2 ;;
        *) targets+=("${1%.cpp}"); shift ;;
    esac
done
[ -n "$time_limit$runs_limit" ] || time_limit=60
limit=()
limit_text=""
if [ -n "$runs_limit" ]; then
    limit+=(-runs="$runs_limit")
    limit_text="$runs_limit executions"
fi
if [ -n "$time_limit" ]; then
    limit+=(-max_total_time="$time_limit")
    limit_text="${limit_text:+$limit_text or }$time_limit s"
fi
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(fuzz_all_targets)
artifacts=${artifacts:-$FUZZ_BUILD/artifacts}
mkdir -p "$artifacts"

work=$(mktemp -d "${TMPDIR:-/tmp}/longhaul-fuzz.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

# run_target TARGET: one target's run; its table row in $work/TARGET.row,
# its status in $work/TARGET.rc, what to show on a finding in $work/TARGET.tail.
run_target() {
    local t=$1 bin before log start rc seconds execs cov after rate outcome
    bin=$(fuzz_binary "$t")
    if [ ! -x "$bin" ]; then
        echo "fuzz/run.sh: $bin is not built" >"$work/$t.tail"
        printf '%-22s %12s %8s %9s %14s %7s  %s\n' "$t" - - - - - "not built" >"$work/$t.row"
        echo 1 >"$work/$t.rc"
        return
    fi
    mkdir -p "$work/$t"
    if [ -d "$FUZZ_CORPORA/$t" ]; then
        cp -- "$FUZZ_CORPORA/$t"/* "$work/$t"/ 2>/dev/null || true
    else
        echo "fuzz/run.sh: no committed corpus for $t (fuzz/make_corpora.sh $t); starting empty" >&2
    fi
    before=$(find "$work/$t" -type f | wc -l)
    log=$work/$t.log
    start=$(date +%s.%N)
    rc=0
    # shellcheck disable=SC2046
    "$bin" $(fuzz_common_options "$t") "${limit[@]}" -artifact_prefix="$artifacts/$t-" "$work/$t" >"$log" 2>&1 || rc=$?
    seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    execs=${execs:-0}
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
    after=$(find "$work/$t" -type f | wc -l)
    rate=$(awk -v n="$execs" -v s="$seconds" 'BEGIN { printf "%d", (s > 0 ? n / s : n) }')
    if [ "$rc" = 0 ]; then
        outcome="ok"
    else
        outcome="FINDING (exit $rc): $(grep -m1 -E 'SUMMARY|ERROR: libFuzzer|==ERROR' "$log" || echo 'see log')"
        {
            tail -n 60 "$log"
            ls -1 "$artifacts/$t-"* 2>/dev/null | sed 's/^/  input: /' || true
        } >"$work/$t.tail"
    fi
    printf '%-22s %12s %8s %9s %14s %7s  %s\n' "$t" "$execs" "$seconds" "$rate" "$before->$after" "${cov:--}" "$outcome" >"$work/$t.row"
    echo "$rc" >"$work/$t.rc"
}

# At most $jobs targets at once; the table in the targets' order.
running=0
for t in "${targets[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
    run_target "$t" &
    running=$((running + 1))
done
wait
failed=()
printf '%-22s %12s %8s %9s %14s %7s  %s\n' target executions seconds "exec/s" corpus cov outcome
for t in "${targets[@]}"; do
    cat "$work/$t.row" 2>/dev/null || printf '%-22s  %s\n' "$t" "no result"
    if [ "$(cat "$work/$t.rc" 2>/dev/null)" != 0 ]; then
        failed+=("$t")
        cat "$work/$t.tail" >&2 2>/dev/null || true
    fi
done
echo "limit per target: $limit_text; corpora from fuzz/corpus/"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz/run.sh: findings or errors in: ${failed[*]}" >&2
    exit 1
fi
