#!/bin/sh
# The crypto engine's tests (issue 13) under ThreadSanitizer: configures
# build-tsan with -DLONGHAUL_TSAN=ON, builds only the two test programs that
# hold them, and runs only those test cases. Fails on any test failure or
# any ThreadSanitizer report.
#
#   contrib/run-tsan.sh [--build-only] [BUILD_DIR]      (default: build-tsan)
#
# --build-only configures and builds, and runs nothing (contrib/run-tests.sh
# builds in the background while other tests run, and runs these later).
# JOBS sets the build's parallelism (default: nproc); LONGHAUL_UNITY=ON makes
# it a unity build (contrib/run-tests.sh does).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build_only=0
if [ "${1:-}" = --build-only ]; then
    build_only=1
    shift
fi
build=${1:-$root/build-tsan}
jobs=${JOBS:-$(nproc)}

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLONGHAUL_TSAN=ON \
    -DLONGHAUL_UNITY="${LONGHAUL_UNITY:-OFF}" >/dev/null
cmake --build "$build" -j"$jobs" --target crypto_tests transport_tests
[ "$build_only" = 0 ] || exit 0

# halt_on_error: the first race fails the run; second_deadlock_stack: both
# stacks of a lock-order report.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export TSAN_OPTIONS
# Fewer thread counts in the parallel codec's matrix (every count from 1 to
# 8 runs in the unit tests): races show at two threads and more.
LONGHAUL_TEST_SCALE=${LONGHAUL_TEST_SCALE:-0.1}
export LONGHAUL_TEST_SCALE
status=0
"$build/tests/crypto_tests" --test-case='crypto_pool*,crypto_tuner*,crypto_engine*,crypto_threads*' || status=1
"$build/tests/transport_tests" --test-case='parallel codec*,transport with crypto engines*' || status=1
if [ "$status" -ne 0 ]; then
    echo "run-tsan: FAILED" >&2
    exit 1
fi
echo "run-tsan: crypto engine tests passed under ThreadSanitizer"
