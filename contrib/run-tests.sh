#!/usr/bin/env bash
# Builds (if needed) and runs every test: the unit tests and the regress/
# integration tests in build/, then the unit tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/.
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
