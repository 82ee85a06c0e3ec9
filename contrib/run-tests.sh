#!/usr/bin/env bash
# Builds (if needed) and runs every test: the unit tests and the regress/
# integration tests in build/, then the unit tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/, then every
# libFuzzer target briefly in build-fuzz/ (clang), so that they keep
# building and a shallow finding shows up at once.
# Tests that need what the machine lacks (root, /dev/net/tun, OpenSSH's
# sshd) print why and are reported as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j2

if [ "${LONGHAUL_SKIP_SANITIZERS:-0}" != 1 ]; then
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLONGHAUL_SANITIZE=ON >/dev/null
    cmake --build build-asan -j"$jobs"
    # The sanitizer run moves a tenth of the data volumes (LONGHAUL_TEST_SCALE).
    LONGHAUL_TEST_SCALE=0.1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --test-dir build-asan -L unit --output-on-failure -j2
fi

if [ "${LONGHAUL_SKIP_FUZZ:-0}" != 1 ]; then
    if ! command -v clang++ >/dev/null; then
        echo "fuzz smoke run skipped: clang++ is not installed (contrib/install-deps.sh installs it)"
    else
        CC=clang CXX=clang++ cmake -S . -B build-fuzz -DLONGHAUL_FUZZ=ON -DLONGHAUL_TESTS=OFF >/dev/null
        cmake --build build-fuzz -j"$jobs"
        # A smoke run from an empty corpus; docs/FUZZING.md records the long runs.
        work=$(mktemp -d)
        trap 'rm -rf -- "$work"' EXIT
        for target in build-fuzz/fuzz/*_fuzz; do
            name=$(basename "$target")
            mkdir -p "$work/$name"
            if "$target" -runs="${LONGHAUL_FUZZ_RUNS:-50000}" -max_len=4096 \
                -artifact_prefix=build-fuzz/ "$work/$name" >"$work/$name.log" 2>&1; then
                echo "fuzz smoke: $name: $(grep -E '^Done' "$work/$name.log")"
            else
                cat "$work/$name.log"
                echo "fuzz smoke: $name FAILED; the input is in build-fuzz/ (crash-*, leak-*, timeout-*)" >&2
                exit 1
            fi
        done
    fi
fi
