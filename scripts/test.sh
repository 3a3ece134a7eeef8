#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a tested tree: installs what is
# missing, configures the release preset, builds everything and runs every
# test with CTest. Extra arguments go to ctest (e.g. -R naming).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${HCUDP_PRESET:-release}
# The asan and fuzz presets build with clang-14 and its sanitizer runtimes.
if [[ "$preset" == asan || "$preset" == fuzz ]]; then
  export HCUDP_EXTRAS="${HCUDP_EXTRAS:+$HCUDP_EXTRAS,}fuzz"
fi
./scripts/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
# Two tests per core: most of a test's time is spent waiting for the daemons
# and fakes it drives (the release suite used 1.1 of 2 cores at -j2; -j4 took
# 168 s instead of 247, BENCHMARKS.md "CI wall time").
ctest --preset "$preset" -j"${HCUDP_TEST_JOBS:-$(($(nproc) * 2))}" "$@"
