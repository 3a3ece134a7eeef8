#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a tested tree: installs what is
# missing, configures the release preset, builds everything and runs every
# test with CTest. Extra arguments go to ctest (e.g. -R naming).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
preset=${HCUDP_PRESET:-release}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" -j2 "$@"
