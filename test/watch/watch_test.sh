#!/usr/bin/env bash
# Runs a node-watching program (doc/examples/watch_health.cc, `hcuctl
# watch`) on a copy of a simulated node, as a user would: injects a health
# fault into card 0 (its SimNode `health:`), expects the printed change,
# clears it, expects the recovery, and stops the program with SIGINT (exit 0).
# With HCUCTL set it also creates and destroys a vHCU on card 1 with hcuctl
# and expects both printed.
#   watch_test.sh <unhealthy-regex> <healthy-regex> <work-dir> <node.yaml> <program> [args...]
# In the program's arguments, @NODE@ is the node copy and @ROOT@ its host-root.
set -euo pipefail
unhealthy_re=$1 healthy_re=$2 work=$3 node_src=$4
shift 4
rm -rf "$work"
mkdir -p "$work/root"
node="$work/node.yaml"
cp "$node_src" "$node"
args=()
for a in "$@"; do
  a=${a//@NODE@/$node}
  args+=("${a//@ROOT@/$work/root}")
done

pid=
fail() {
  echo "FAIL: $*" >&2
  echo "--- stdout" >&2; cat "$work/out" >&2
  echo "--- stderr" >&2; cat "$work/err" >&2
  [[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null
  exit 1
}
# Waits until the program's stdout has a line matching <regex>, up to <s> s.
wait_for() {
  local deadline=$((SECONDS + $2))
  until grep -Eq "$1" "$work/out"; do
    kill -0 "$pid" 2>/dev/null || fail "the program ended while waiting for /$1/"
    ((SECONDS < deadline)) || fail "no line /$1/ within $2 s"
    sleep 0.05
  done
}
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

"${args[@]}" >"$work/out" 2>"$work/err" &
pid=$!
wait_for 'watching [0-9]+ cards' 10

start=$(date +%s%N)
sed -i '0,/health: Healthy/s//health: Unhealthy/' "$node"
wait_for "$unhealthy_re" 5
echo "fault injected -> printed: $(ms_since "$start") ms"
start=$(date +%s%N)
sed -i '0,/health: Unhealthy/s//health: Healthy/' "$node"
wait_for "$healthy_re" 5
echo "fault cleared -> printed: $(ms_since "$start") ms"

if [[ -n "${HCUCTL:-}" ]]; then
  sim=(--backend=sim "--sim-node=$node" "--host-root=$work/root")
  "$HCUCTL" "${sim[@]}" vhcu create --card=1 --cu=6 --mem-mib=1024 >"$work/create.out" \
    || fail "hcuctl vhcu create: $(cat "$work/create.out")"
  wait_for 'vHCU [0-9]+ on card 1 \(6 CU, 1024 MiB\) appeared' 5
  id=$(grep -Eo 'vHCU [0-9]+ on card 1' "$work/out" | head -1 | awk '{print $2}')
  "$HCUCTL" "${sim[@]}" vhcu destroy "$id" >/dev/null || fail "hcuctl vhcu destroy $id"
  wait_for "vHCU $id on card 1 \\(6 CU, 1024 MiB\\) is gone" 5
fi

kill -INT "$pid"
code=0
wait "$pid" || code=$?
pid=
((code == 0)) || fail "exit code $code after SIGINT, want 0"
echo "ok: $(wc -l <"$work/out") lines printed"
