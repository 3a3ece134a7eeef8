#!/usr/bin/env bash
# Smoke test of a built image, run by build-image.sh:
#
#   image-smoke.sh <engine> <image> <smoke-kubelet>
#
#  1. `hcu-dp-daemon --version` and `hcuctl version` print the image's version
#     (so every shared library of both binaries is in the image);
#  2. `hcuctl devices -o json` on demo/nodes/k100ai-8.yaml (bind-mounted)
#     prints exactly test/hcuctl/golden/k100ai-8.devices.json;
#  3. hcu-dp-daemon on that SimNode registers with the fake kubelet
#     (<smoke-kubelet>, test/image/smoke_kubelet.cc, on the host) through a
#     bind-mounted socket directory; kubelet gets one Allocate answered; the
#     daemon is then sent SIGTERM inside the container and must exit 0 and
#     close its ListAndWatch stream.
# Every wait has a deadline (HCUDP_SMOKE_TIMEOUT seconds, default 60).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/engine.sh
source "$root/scripts/lib/engine.sh"
[[ $# -eq 3 ]] || { echo "usage: image-smoke.sh <engine> <image> <smoke-kubelet>" >&2; exit 2; }
ENGINE=$1 image=$2 kubelet=$3
[[ -x "$kubelet" ]] || { echo "image-smoke.sh: $kubelet is not an executable" >&2; exit 1; }
timeout=${HCUDP_SMOKE_TIMEOUT:-60}
nodes="$root/demo/nodes"
work=$(mktemp -d /tmp/hcudp-image-smoke.XXXXXX)
kpid=""
cleanup() {
  [[ -n "$kpid" ]] && kill "$kpid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "image-smoke: FAIL: $*" >&2; exit 1; }
version=${image##*:}

echo "-- versions"
engine_run "$image" 'hcu-dp-daemon --version && hcuctl version' >"$work/versions" \
  || { cat "$work/versions"; fail "a binary does not start in the image"; }
cat "$work/versions"
[[ $(grep -c -F "$version" "$work/versions") -ge 2 ]] || echo "image-smoke: note: the binaries report another version than the tag $version (a worktree's .git is not in the build context)"

echo "-- hcuctl devices on a SimNode"
engine_run "$image" 'hcuctl --backend=sim --sim-node=/nodes/k100ai-8.yaml devices -o json' \
  "$nodes:/nodes:ro" >"$work/devices.json" || fail "hcuctl devices exited non-zero"
diff -u "$root/test/hcuctl/golden/k100ai-8.devices.json" "$work/devices.json" \
  || fail "hcuctl devices in the image differs from the golden output"
echo "ok   $(grep -c '"bdf"' "$work/devices.json") cards, as the golden output"

echo "-- hcu-dp-daemon with the fake kubelet"
mkdir -p "$work/dp" "$work/root"
mkfifo "$work/cue"
"$kubelet" "$work/dp" hygon.com/hcu "$work/cue" "$timeout" &
kpid=$!
# In the container: start the daemon, wait for the kubelet's cue (with a
# deadline), SIGTERM it and wait for its exit (with a watchdog).
script="
hcu-dp-daemon --backend=sim --sim-node=/nodes/k100ai-8.yaml --host-root=$work/root \
  --device-plugin-path=$work/dp --pulse=0 --log-severity=WARNING &
d=\$!
if ! timeout $timeout sh -c 'read line < $work/cue'; then
  echo 'container: no cue from the kubelet within ${timeout}s'; kill -KILL \$d; exit 1
fi
kill -TERM \$d
( sleep $timeout; kill -KILL \$d ) 2>/dev/null &
w=\$!
rc=0; wait \$d || rc=\$?
kill \$w 2>/dev/null
echo \"container: hcu-dp-daemon exited with \$rc after SIGTERM\"
exit \$rc"
rc=0
engine_run "$image" "$script" "$nodes:/nodes:ro" "$work:$work" || rc=$?
krc=0
wait "$kpid" || krc=$?
kpid=""
[[ $krc -eq 0 ]] || fail "the fake kubelet side failed (exit $krc)"
[[ $rc -eq 0 ]] || fail "the daemon did not exit 0 after SIGTERM (exit $rc)"
echo "ok   registered, one Allocate answered, SIGTERM, exit 0"
