# shellcheck shell=bash
# Container engine helpers for build-image.sh: the same few operations on
# docker, podman or buildah. Sourced; sets and reads ENGINE.
#
# buildah runs daemonless as root with --isolation=chroot (no user namespaces
# or cgroups needed, so it also works inside a CI container) and the vfs
# storage driver (no overlay mounts needed); HCUDP_BUILDAH_STORAGE_DRIVER
# overrides the driver.

# engine_detect [auto|docker|podman|buildah]: the first engine that works.
# A docker client without a reachable daemon is not an engine. With auto,
# docker and podman must also prove that they can build a RUN step and run a
# container of the result, as build-image.sh and its smoke test do
# (_engine_runs): a podman whose OCI runtime cannot start a container here
# (crun on a host with hybrid cgroups; runc refused podman's default
# nofile rlimit) answers `podman info` and fails later, so auto goes on to
# buildah.
engine_detect() {
  local want=${1:-auto} e
  for e in docker podman buildah; do
    [[ "$want" == auto || "$want" == "$e" ]] || continue
    command -v "$e" >/dev/null 2>&1 || continue
    case "$e" in
      docker) docker info >/dev/null 2>&1 || continue ;;
      podman) podman info >/dev/null 2>&1 || continue ;;
      buildah) _buildah version >/dev/null 2>&1 || continue ;;
    esac
    if [[ "$want" == auto && "$e" != buildah ]] && ! _engine_runs "$e"; then
      echo "engine: $e is installed but cannot build and run a container here; trying the next engine" >&2
      continue
    fi
    ENGINE=$e
    return 0
  done
  return 1
}

# _engine_runs <docker|podman>: builds a one-RUN image FROM scratch whose
# root is the host's /bin/sh and the libraries it loads (no registry, no
# base image), runs a container of it, then removes both. True when the RUN
# step ran and the container saw its result; at most 120 s each.
_engine_runs() {
  local e=$1 dir tag lib rc=0
  dir=$(mktemp -d) || return 1
  tag=localhost/hcudp-engine-probe:$$
  mkdir -p "$dir/root/bin"
  cp -L /bin/sh "$dir/root/bin/sh"
  for lib in $(ldd /bin/sh 2>/dev/null | grep -o '/[^ ]*'); do
    mkdir -p "$dir/root$(dirname "$lib")"
    cp -L "$lib" "$dir/root$lib"
  done
  printf 'FROM scratch\nCOPY root/ /\nRUN ["/bin/sh", "-c", "echo ran >/probe"]\n' \
    >"$dir/Containerfile"
  timeout 120 "$e" build -q -f "$dir/Containerfile" -t "$tag" "$dir" >/dev/null 2>&1 || rc=1
  if ((rc == 0)); then
    timeout 120 "$e" run --rm --network=host --entrypoint /bin/sh "$tag" -c 'test -f /probe' \
      >/dev/null 2>&1 || rc=1
  fi
  "$e" rmi -f "$tag" >/dev/null 2>&1 || true
  rm -rf "$dir"
  return $rc
}

_buildah() { buildah --storage-driver="${HCUDP_BUILDAH_STORAGE_DRIVER:-vfs}" "$@"; }

engine_has_image() {
  case "$ENGINE" in
    docker) docker image inspect "$1" >/dev/null 2>&1 ;;
    podman) podman image exists "$1" ;;
    buildah) _buildah inspect --type image "$1" >/dev/null 2>&1 ;;
  esac
}

# engine_import <rootfs.tar> <name>: a base image from a root file system.
engine_import() {
  local tar=$1 name=$2 path=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin c
  case "$ENGINE" in
    docker) docker import --change 'CMD ["bash"]' --change "ENV $path" "$tar" "$name" >/dev/null ;;
    podman) podman import --change 'CMD ["bash"]' --change "ENV $path" "$tar" "$name" >/dev/null ;;
    buildah)
      c=$(_buildah from scratch)
      _buildah add --quiet "$c" "$tar" / >/dev/null
      _buildah config --cmd bash --env "$path" "$c"
      _buildah commit --quiet --rm "$c" "$name" >/dev/null ;;
  esac
}

# engine_build <tag> <context> <pull-policy: missing|never>
# Build arguments come from the array BUILD_ARGS (K=V), bind mounts for the
# RUN steps from BUILD_VOLUMES (src:dst[:ro]); docker has no build-time
# mounts and gets only the arguments.
engine_build() {
  local tag=$1 context=$2 pull=$3 a args=() vols=()
  for a in "${BUILD_ARGS[@]}"; do args+=(--build-arg "$a"); done
  for a in "${BUILD_VOLUMES[@]}"; do vols+=(--volume "$a"); done
  case "$ENGINE" in
    docker) docker build "${args[@]}" -t "$tag" "$context" ;;
    podman) podman build --pull="$pull" "${vols[@]}" "${args[@]}" -t "$tag" "$context" ;;
    buildah)
      local p=true
      [[ "$pull" == never ]] && p=never
      _buildah bud --isolation=chroot --layers=false --pull="$p" "${vols[@]}" "${args[@]}" \
        -t "$tag" "$context" ;;
  esac
}

# engine_run <image> <script> [volume...]: runs `sh -c <script>` in a new
# container of <image>, with the volumes (src:dst) bind-mounted; returns its
# exit status. The container shares the host's network (buildah's chroot
# isolation always does; docker and podman are told to).
engine_run() {
  local image=$1 script=$2 v vols=() c rc
  shift 2
  for v in "$@"; do vols+=(--volume "$v"); done
  case "$ENGINE" in
    docker|podman)
      "$ENGINE" run --rm --network=host "${vols[@]}" --entrypoint /bin/sh "$image" -c "$script" ;;
    buildah)
      c=$(_buildah from --pull=never --quiet "$image")
      rc=0
      _buildah run --isolation=chroot "${vols[@]}" "$c" -- /bin/sh -c "$script" || rc=$?
      _buildah rm "$c" >/dev/null
      return $rc ;;
  esac
}

# engine_save <image> <file.tar>: a docker-archive (docker load, ctr import).
engine_save() {
  rm -f "$2"
  case "$ENGINE" in
    docker) docker save -o "$2" "$1" ;;
    podman) podman save --format docker-archive -o "$2" "$1" ;;
    buildah) _buildah push --quiet "$1" "docker-archive:$2:$1" >/dev/null ;;
  esac
}

# engine_prune: drops dangling images (earlier builds of the same tag).
engine_prune() {
  case "$ENGINE" in
    docker) docker image prune -f >/dev/null ;;
    podman) podman image prune -f >/dev/null ;;
    buildah) _buildah rmi --prune >/dev/null 2>&1 || true ;;
  esac
}
