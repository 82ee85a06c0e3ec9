#!/usr/bin/env bash
# Builds (if needed) and runs every test, in six stages, then prints a
# summary (docs/TESTING.md):
#   unit     the doctest unit tests (build/, ctest label "unit");
#   regress  the regress/ integration tests in build/: OpenSSH interop in
#            both directions, ssh-keygen, forwarding;
#   wan      the emulated-WAN tests (label "wan"), alone, after the builds;
#   asan     build-asan/ (AddressSanitizer + UBSan): the unit tests again,
#            and the interop scripts labelled "sanitize" against its ssh and
#            sshd with small volumes; any sanitizer report fails the test;
#   tsan     the crypto engine's tests under ThreadSanitizer (build-tsan/,
#            contrib/run-tsan.sh);
#   fuzz     every libFuzzer target briefly, built in build-asan/ (with
#            clang, one build serves both stages: the same instrumented
#            objects, the coverage hooks inert outside a fuzzer).
# The summary says what ran in each stage and what was skipped and why. A
# skip fails the run unless --allow-skip (or LONGHAUL_ALLOW_SKIP=1) is given,
# for machines that lack root, /dev/net/tun, OpenSSH, PAM, tmux or python3.
# LONGHAUL_SKIP_SANITIZERS=1, LONGHAUL_SKIP_TSAN=1 and LONGHAUL_SKIP_FUZZ=1 leave a stage out on
# request; the summary says so. The three trees are unity builds (half the
# CPU time; LONGHAUL_UNITY=OFF builds file by file). LONGHAUL_BACKGROUND_BUILDS=1 builds the
# sanitizer trees beside the regress tests, at SCHED_IDLE. Results: build/test-results/.
set -euo pipefail
cd "$(dirname "$0")/.."

allow_skip=${LONGHAUL_ALLOW_SKIP:-0}
for arg in "$@"; do
    case $arg in
    --allow-skip) allow_skip=1 ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "run-tests.sh: unknown argument '$arg' (--allow-skip, --help)" >&2
        exit 2
        ;;
    esac
done
command -v python3 >/dev/null || {
    echo "run-tests.sh: python3 is needed (contrib/install-deps.sh installs it)" >&2
    exit 1
}

start=$(date +%s)
results=$PWD/build/test-results
rm -rf "$results"
mkdir -p "$results"
# Tests run with skips allowed, so that the run goes on and the summary
# lists every skip; the policy (allow_skip) is applied once, at the end.
export LONGHAUL_ALLOW_SKIP=1

finish() {
    local rc=$? summary_rc=0
    # A background build still running (the run stopped early) goes too.
    [ -z "${builds_pid:-}" ] || kill -- "-$builds_pid" 2>/dev/null || true
    [ -z "${light_pid:-}" ] || kill -- "-$light_pid" 2>/dev/null || true
    python3 contrib/test_summary.py "$results" "$allow_skip" $(($(date +%s) - start)) "$rc" || summary_rc=$?
    [ "$rc" != 0 ] || rc=$summary_rc
    exit "$rc"
}
trap finish EXIT

# A stage this machine cannot run at all.
skip() {
    echo "SKIP: $*"
    echo "$*" >>"$results/skips.run-tests.log"
}

# run_ctest NAME DIR CTEST-ARGS...: results in $results/NAME.*; each test
# records its skips in skips.NAME.log.
run_ctest() {
    local name=$1 dir=$2 rc=0
    shift 2
    ctest --test-dir "$dir" --show-only=json-v1 "$@" >"$results/$name.json"
    # The JUnit file keeps the end of each test's output, where the counts are.
    LONGHAUL_SKIP_LOG=$results/skips.$name.log \
        ctest --test-dir "$dir" --output-on-failure --output-junit "$results/$name.xml" \
        --test-output-size-passed 65536 --test-output-truncation head "$@" || rc=$?
    echo "$rc" >"$results/$name.rc"
    return "$rc"
}

# timed PHASE COMMAND...: runs it and records its wall time for the summary
# (CI has a time budget; the summary shows where it goes).
timed() {
    local phase=$1 t0 rc=0
    shift
    t0=$(date +%s)
    "$@" || rc=$?
    echo "$phase $(($(date +%s) - t0))" >>"$results/times"
    return "$rc"
}

# A failed build stops the run; failed tests do not: every stage runs and
# the summary lists all that failed.
tests_failed=0
jobs=$(nproc)
export LONGHAUL_UNITY=${LONGHAUL_UNITY:-ON}
# New trees are Ninja trees when ninja is installed: a clean release tree
# took 600 CPU-seconds and 5:07 with Ninja against 718 and 6:08 with make,
# whose per-target dependency scanning is the difference (docs/TESTING.md).
# A tree that exists keeps the generator it was made with.
if command -v ninja >/dev/null; then export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLONGHAUL_UNITY="$LONGHAUL_UNITY" >/dev/null
timed "build" cmake --build build -j"$jobs"
# The sanitizer builds (build-asan/, build-tsan/) run after the unit and
# interop tests. LONGHAUL_BACKGROUND_BUILDS=1 starts them beside those
# tests at SCHED_IDLE priority instead, to use the CPU the tests leave
# idle; on the 2-vCPU VMs CI runs on that made the tests 55 % slower (idle
# priority inside a guest does not keep a build off the tests' caches and
# cycles), and the two together took longer than one after the other
# (docs/TESTING.md). The WAN tests, which judge throughput, run alone after
# the builds either way.
asan_wanted=0
[ "${LONGHAUL_SKIP_SANITIZERS:-0}" = 1 ] || asan_wanted=1
tsan_wanted=0
[ "${LONGHAUL_SKIP_TSAN:-0}" = 1 ] || tsan_wanted=1
sanitizer_builds() {
    local rc=0
    if [ "$asan_wanted" = 1 ]; then
        # With clang the fuzz targets come from the same build (LONGHAUL_FUZZ):
        # one sanitizer build instead of two.
        local asan_fuzz=()
        if [ "${LONGHAUL_SKIP_FUZZ:-0}" != 1 ] && command -v clang++ >/dev/null; then
            asan_fuzz=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DLONGHAUL_FUZZ=ON)
        fi
        cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLONGHAUL_SANITIZE=ON -DLONGHAUL_UNITY="$LONGHAUL_UNITY" \
            "${asan_fuzz[@]}" >/dev/null &&
            cmake --build build-asan -j"$jobs" || rc=1
    fi
    if [ "$tsan_wanted" = 1 ]; then
        JOBS=$jobs contrib/run-tsan.sh --build-only "$PWD/build-tsan" || rc=1
    fi
    return "$rc"
}
builds_pid=""
if [ "${LONGHAUL_BACKGROUND_BUILDS:-0}" = 1 ] && chrt --idle 0 true 2>/dev/null; then
    export -f sanitizer_builds
    export asan_wanted tsan_wanted jobs
    # Its own process group, so that an early exit stops the whole build.
    setsid chrt --idle 0 bash -c sanitizer_builds >"$results/sanitizer-builds.log" 2>&1 &
    builds_pid=$!
fi

# The scripts labelled sanitize_once (no bulk data, no speed judged) run
# only in the ASan stage when it runs (regress/CMakeLists.txt).
main_exclude='^wan$'
[ "$asan_wanted" = 0 ] || main_exclude='^(wan|sanitize_once)$'
timed "unit+regress" run_ctest main build -LE "$main_exclude" -j2 || tests_failed=1

# The WAN test that judges no throughput (label wan_light: the outage test,
# 3 minutes at 40 Mbit/s, most of it waiting out 10 s link cuts and TCP's
# back-off) runs beside the sanitizer builds; the others run alone after
# them. Its output is shown once it is done.
light_pid=""
if [ -z "$builds_pid" ]; then
    export -f timed run_ctest
    export results
    # Its own process group, so that an early exit stops it and its test.
    setsid bash -c 'timed "wan (light, beside the builds)" run_ctest wan_light build -L "^wan_light\$"' \
        >"$results/wan_light.log" 2>&1 &
    light_pid=$!
fi

# The sanitizer builds' remainder, in the foreground: a failed build stops
# the run, as the main one does.
builds_rc=0
if [ -n "$builds_pid" ]; then
    timed "sanitizer builds (rest)" wait "$builds_pid" || builds_rc=$?
    builds_pid=""
    tail -n 3 "$results/sanitizer-builds.log"
else
    timed "sanitizer builds" sanitizer_builds || builds_rc=$?
fi
if [ -n "$light_pid" ]; then
    wait "$light_pid" || tests_failed=1
    light_pid=""
    cat "$results/wan_light.log"
fi
[ "$builds_rc" = 0 ] || { cat "$results/sanitizer-builds.log" 2>/dev/null; echo "sanitizer builds failed" >&2; exit 1; }

if [ -f "$results/wan_light.rc" ]; then
    timed "wan" run_ctest wan build -L '^wan$' -LE '^wan_light$' || tests_failed=1
else
    timed "wan" run_ctest wan build -L '^wan$' || tests_failed=1
fi

if [ "$asan_wanted" = 1 ]; then
    # The unit tests move a tenth of their data volumes (LONGHAUL_TEST_SCALE),
    # the interop scripts LH_BULK_MB instead of 256 MiB. regress/lib.sh sends
    # every sanitizer report (forked sshd children's too) to a directory the
    # script checks at exit.
    LONGHAUL_TEST_SCALE=0.1 LH_BULK_MB=${LONGHAUL_ASAN_BULK_MB:-8} \
        ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        timed "asan tests" run_ctest asan build-asan -L '^(unit|sanitize)$' -j2 || tests_failed=1
else
    echo "asan: LONGHAUL_SKIP_SANITIZERS=1" >>"$results/omitted"
fi

if [ "${LONGHAUL_SKIP_TSAN:-0}" != 1 ]; then
    # The crypto engine's worker threads under ThreadSanitizer (build-tsan/,
    # only the two test programs that hold the engine's cases).
    rc=0
    JOBS=$jobs timed "tsan tests" contrib/run-tsan.sh "$PWD/build-tsan" >"$results/tsan.log" 2>&1 || rc=$?
    tail -n 5 "$results/tsan.log"
    echo "$rc" >"$results/tsan.rc"
    [ "$rc" = 0 ] || { cat "$results/tsan.log"; tests_failed=1; }
else
    echo "tsan: LONGHAUL_SKIP_TSAN=1" >>"$results/omitted"
fi

if [ "${LONGHAUL_SKIP_FUZZ:-0}" != 1 ]; then
    if ! command -v clang++ >/dev/null; then
        skip "fuzz: clang++ is not installed (contrib/install-deps.sh installs it)"
    else
        echo 1 >"$results/fuzz.rc" # until the stage has passed
        # Built by the asan stage above unless that stage was left out.
        fuzz_build=build-asan
        if [ ! -x build-asan/fuzz/packet_decoder_fuzz ]; then
            fuzz_build=build-fuzz
            CC=clang CXX=clang++ cmake -S . -B build-fuzz -DLONGHAUL_FUZZ=ON -DLONGHAUL_TESTS=OFF >/dev/null
            timed "fuzz build" cmake --build build-fuzz -j"$jobs" --target fuzz_targets
        fi
        (cd "$fuzz_build/fuzz" && ls -- *_fuzz) >"$results/fuzz.targets"
        # Every target from its committed corpus (fuzz/corpus/) for a few
        # seconds (fuzz/run.sh, which also reproduces the long runs recorded
        # in docs/FUZZING.md); LONGHAUL_FUZZ_RUNS=N runs N executions instead.
        # fuzz/run.sh exits 1 on a finding, after the other targets ran.
        rc=0
        if [ -n "${LONGHAUL_FUZZ_RUNS:-}" ]; then
            timed "fuzz runs" fuzz/run.sh --build "$fuzz_build" --jobs "$jobs" --runs "$LONGHAUL_FUZZ_RUNS" || rc=$?
        else
            timed "fuzz runs" fuzz/run.sh --build "$fuzz_build" --jobs "$jobs" --time "${LONGHAUL_FUZZ_SECONDS:-4}" || rc=$?
        fi
        echo "$rc" >"$results/fuzz.rc"
        [ "$rc" = 0 ] || tests_failed=1
    fi
else
    echo "fuzz: LONGHAUL_SKIP_FUZZ=1" >>"$results/omitted"
fi
[ "$tests_failed" = 0 ] # the summary (finish) says which
