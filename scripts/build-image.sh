#!/usr/bin/env bash
# Builds the hcu-device-plugin image from the Dockerfile, smoke-tests it and
# exports it as an offline tar, in one command:
#
#   ./scripts/build-image.sh [--base=registry|debootstrap] [--engine=auto|docker|podman|buildah]
#                            [--image=NAME] [--out=DIR] [--no-smoke] [--smoke-kubelet=PATH]
#                            [--max-size-mb=N] [--refresh-base]
#
#  1. the version is `git describe --tags --dirty --always` (the image tag,
#     its version label and the binaries' --version);
#  2. the engine is the first of docker, podman and buildah that works here
#     (buildah: --isolation=chroot, vfs storage; no daemon needed);
#  3. --base=debootstrap makes the Dockerfile's base images debian:12 and
#     debian:12-slim from Debian's archive (scripts/debian-base.sh, cached) for
#     machines that reach no image registry; the default pulls them;
#  4. the smoke test (scripts/image-smoke.sh) runs both binaries in the image
#     and the daemon against the project's fake kubelet;
#  5. OUT/hcu-device-plugin-<version>.tar is a docker-archive of the image
#     (`docker load -i`, `ctr -n k8s.io images import`), checked for a
#     consistent manifest; its uncompressed size is printed and, with
#     --max-size-mb, enforced.
#
# NAME defaults to the reference the manifests use, so an imported tar needs
# only the tag changed in them. OUT defaults to build/image. The smoke test
# needs the fake kubelet driver (test/image): --smoke-kubelet names a built
# one, otherwise it is built with the release preset.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/engine.sh
source "$root/scripts/lib/engine.sh"

base=registry engine=auto smoke=1 smoke_kubelet="" max_mb="" refresh=()
image=harbor.sourcefind.cn:5443/hcu/admin/base/hcu-device-plugin
out="$root/build/image"
for arg in "$@"; do
  case "$arg" in
    --base=registry|--base=debootstrap) base=${arg#--base=} ;;
    --engine=*) engine=${arg#--engine=} ;;
    --image=*) image=${arg#--image=} ;;
    --out=*) out=${arg#--out=} ;;
    --no-smoke) smoke=0 ;;
    --smoke-kubelet=*) smoke_kubelet=${arg#--smoke-kubelet=} ;;
    --max-size-mb=*) max_mb=${arg#--max-size-mb=} ;;
    --refresh-base) refresh=(--refresh) ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "build-image.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -z "$max_mb" || "$max_mb" =~ ^[0-9]+$ ]] || { echo "build-image.sh: --max-size-mb wants a number, got '$max_mb'" >&2; exit 2; }
step() { echo "== build-image: $*"; }
t0=$SECONDS

# A fresh Debian 12 machine: the engine, mmdebstrap and the host build of
# the smoke test's driver come from Debian's packages (idempotent).
if ! engine_detect "$engine" || { [[ "$base" == debootstrap ]] && ! command -v mmdebstrap >/dev/null; } \
   || [[ $smoke -eq 1 && -z "$smoke_kubelet" ]]; then
  HCUDP_EXTRAS=release "$root/scripts/install-deps.sh"
fi
engine_detect "$engine" || {
  echo "build-image.sh: no working container engine ($engine); install one, e.g. apt-get install buildah" >&2
  exit 1
}
version=$(git -C "$root" describe --tags --dirty --always)
tag="$image:$version"
step "version $version, engine $ENGINE, base from $base"

if [[ $smoke -eq 1 && -z "$smoke_kubelet" ]]; then
  step "building the smoke test's fake kubelet driver (release preset)"
  (cd "$root" && cmake --preset release >/dev/null \
     && cmake --build --preset release --target hcudp_smoke_kubelet >/dev/null)
  smoke_kubelet="$root/build/release/test/image/hcudp_smoke_kubelet"
fi

pull=missing
if [[ "$base" == debootstrap ]]; then
  pull=never
  mapfile -t tars < <("$root/scripts/debian-base.sh" "${refresh[@]}" full slim)
  cache=${HCUDP_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcudp-image}
  for i in 0 1; do
    name=docker.io/library/debian:12
    [[ $i -eq 1 ]] && name=docker.io/library/debian:12-slim
    stamp="$cache/imported-$ENGINE-$(basename "$name")"
    if [[ "$(cat "$stamp" 2>/dev/null)" == "${tars[$i]}" ]] && engine_has_image "$name"; then
      step "$name: already imported from $(basename "${tars[$i]}")"
    else
      step "$name: importing $(basename "${tars[$i]}")"
      engine_import "${tars[$i]}" "$name"
      echo "${tars[$i]}" >"$stamp"
    fi
  done
fi

step "building $tag"
# The build context is the source tree (the .dockerignore keeps build/ out).
BUILD_ARGS=("VERSION=$version")
BUILD_VOLUMES=()
# The shared compiler cache (see the Dockerfile): host builds that export
# CCACHE_REMOTE_STORAGE=file:$shared (as .ci/run does) fill it, the
# image's build stage reads it. docker cannot mount it and compiles afresh.
shared=${HCUDP_SHARED_CCACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcudp-image/ccache}
if [[ "$ENGINE" != docker && -d "$shared" ]]; then
  BUILD_ARGS+=("CCACHE_REMOTE_STORAGE=file:/ccache|read-only")
  BUILD_VOLUMES+=("$shared:/ccache:ro")
  step "reusing compiled objects from $shared"
fi
engine_build "$tag" "$root" "$pull"
engine_prune
step "built in $((SECONDS - t0)) s"

if [[ $smoke -eq 1 ]]; then
  step "smoke test"
  "$root/scripts/image-smoke.sh" "$ENGINE" "$tag" "$smoke_kubelet"
fi

mkdir -p "$out"
tar="$out/hcu-device-plugin-$version.tar"
step "exporting $tar"
engine_save "$tag" "$tar"
size=$(python3 "$root/scripts/check-image-archive.py" "$tar" "$tag")
mb=$(( (size + 999999) / 1000000 ))
step "image $tag: $(awk "BEGIN { printf \"%.1f\", $size / 1e6 }") MB uncompressed ($size bytes), archive $(du -m "$tar" | cut -f1) MiB"
echo "$size" >"$out/size-bytes"
if [[ -n "$max_mb" && $mb -gt $max_mb ]]; then
  echo "build-image.sh: FAIL: the image is $mb MB, over the $max_mb MB limit" >&2
  exit 1
fi
step "done in $((SECONDS - t0)) s: $tar"
