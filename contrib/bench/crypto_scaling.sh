#!/bin/sh
# The scaling curve of the parallel crypto engine (issue 13): runs
# `cipher_bench --engine` with worker counts 0 (serial) .. the CPUs of this
# machine and prints its lines, `engine <cipher> workers=<n> MB/s=<x>`,
# between a header (machine, load) and a footer (load again).
#
# Build first (Release or RelWithDebInfo):
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build --target cipher_bench
# Then:
#   contrib/bench/crypto_scaling.sh [--seconds N] [--filter TEXT] [--workers MAX] [--batch PACKETS]
#
# Defaults: 1 s per figure (the benchmark's), every algorithm, workers up
# to nproc, 16 packets of 32 KiB per batch; about 12 algorithms x (nproc+1)
# seconds in all (some 3.5 minutes on 16 cores). LONGHAUL_BUILD_DIR selects
# another build directory. Other arguments pass through to cipher_bench.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${LONGHAUL_BUILD_DIR:-$root/build}
bin=$build/bin/cipher_bench
if [ ! -x "$bin" ]; then
    echo "crypto_scaling: $bin not found; build the cipher_bench target first" >&2
    exit 1
fi
workers=$(nproc)
for a in "$@"; do
    case $a in --workers) workers= ;; esac
done
echo "# crypto_scaling: $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -n), $(nproc) CPUs:" \
    "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$workers" ]; then
    "$bin" --engine --workers "$workers" "$@"
else
    "$bin" --engine "$@"
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
