#!/usr/bin/env bash
# The main job on a laptop: build, run hcu-dp-daemon on a simulated 8-card
# K100_AI node (demo/nodes/k100ai-8.yaml) with a private plugin directory, show
# what it serves with hcuctl, ask it for 2 cards as kubelet would, and stop it
# cleanly with SIGTERM. No HCU, kubelet or cluster needed.
#
#   ./demo/run-local.sh                 # the k100ai-8 node
#   ./demo/run-local.sh demo/nodes/z100l-mixed.yaml
set -euo pipefail
cd "$(dirname "$0")/.."

node=${1:-demo/nodes/k100ai-8.yaml}
bin=${HCUDP_BUILD_DIR:-build/release}
# CTest runs this script against an existing build (HCUDP_DEMO_SKIP_BUILD=1).
if [[ -z "${HCUDP_DEMO_SKIP_BUILD:-}" ]]; then
  ./scripts/install-deps.sh
  cmake --preset release >/dev/null
  cmake --build --preset release --target hcu-dp-daemon hcuctl
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/hcudp-demo-XXXXXX")
plugins="$work/device-plugins/"
mkdir -p "$plugins"
daemon_pid=""
cleanup() {
  if [[ -n "$daemon_pid" ]] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -TERM "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

global=(--backend=sim "--sim-node=$node" "--host-root=$work/root" "--device-plugin-path=$plugins")
hcuctl() { "$bin/hcuctl/hcuctl" "${global[@]}" "$@"; }
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "the simulated node ($node)"
hcuctl devices

step "starting hcu-dp-daemon (strategy mixed, policy 0); log: $work/daemon.log"
"$bin/hcu-dp-daemon/hcu-dp-daemon" "${global[@]}" --strategy=mixed --pulse=5 \
  >"$work/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
  compgen -G "$plugins/hygon.com_*" >/dev/null && break
  sleep 0.05
done
hcuctl plugins --check || { cat "$work/daemon.log"; exit 1; }

step "hcuctl plugins: what the daemon serves (no kubelet here, so it also waits to register)"
hcuctl plugins

step "hcuctl allocate --resource hygon.com/hcu --count 2: preferred pick + Allocate, as kubelet does"
hcuctl allocate --resource hygon.com/hcu --count 2

step "SIGTERM: the daemon stops serving, removes its sockets and exits 0"
kill -TERM "$daemon_pid"
rc=0
wait "$daemon_pid" || rc=$?
daemon_pid=""
left=$(compgen -G "$plugins/hygon.com_*" || true)
echo "daemon exit code: $rc; sockets left: ${left:-none}"
[[ $rc -eq 0 && -z "$left" ]]
