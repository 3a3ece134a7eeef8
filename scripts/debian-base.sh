#!/usr/bin/env bash
# Makes the debian:12 and debian:12-slim root file systems from Debian's
# archive with mmdebstrap, the way Debian's official images are made (variant
# minbase; -slim leaves out documentation, man pages and locales, keeping the
# copyright files), and caches them as tarballs. Used where no image registry
# is reachable: build-image.sh imports them as the Dockerfile's base images,
# and the package test unpacks one as a fresh root to install the .debs into.
#
#   debian-base.sh [--refresh] full|slim...
#
# Prints the tarball path of each requested flavour, one a line. A tarball is
# reused while it is younger than HCUDP_BASE_MAX_AGE_DAYS (default 7, so
# security updates arrive weekly) and was made with the same options;
# --refresh remakes it. Cache: HCUDP_IMAGE_CACHE (default ~/.cache/hcudp-image).
# Mirrors: HCUDP_DEBIAN_MIRROR, HCUDP_DEBIAN_SECURITY_MIRROR.
set -euo pipefail

refresh=0
flavours=()
for arg in "$@"; do
  case "$arg" in
    --refresh) refresh=1 ;;
    full|slim) flavours+=("$arg") ;;
    *) echo "debian-base.sh: unknown argument '$arg' (want --refresh, full or slim)" >&2; exit 2 ;;
  esac
done
[[ ${#flavours[@]} -gt 0 ]] || { echo "usage: debian-base.sh [--refresh] full|slim..." >&2; exit 2; }
command -v mmdebstrap >/dev/null \
  || { echo "debian-base.sh: mmdebstrap not found (apt-get install mmdebstrap)" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "debian-base.sh: needs root (mmdebstrap's root mode)" >&2; exit 1; }

mirror=${HCUDP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${HCUDP_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
max_age=${HCUDP_BASE_MAX_AGE_DAYS:-7}
cache=${HCUDP_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcudp-image}
mkdir -p "$cache/base"
exec 8>"$cache/base/.lock"
flock 8

# Debian's three bookworm sources; merged /usr set up as debootstrap does
# (not through the usrmerge package, which would pull perl in); the apt
# settings of the official images written into the root (no translations, no
# recommends, downloaded .debs removed after each install so image layers do
# not carry them); empty apt lists. Downloaded .debs are kept in
# $cache/debs so a remake fetches only what changed.
apt_conf='Acquire::Languages "none";
APT::Install-Recommends "false";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";'
opts=(
  --variant=minbase --format=tar --quiet
  --setup-hook=/usr/share/mmdebstrap/hooks/merged-usr/setup00.sh
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives'
  --setup-hook="sync-in $cache/debs /var/cache/apt/archives"
  --customize-hook="sync-out /var/cache/apt/archives $cache/debs"
  --customize-hook="printf '%s\n' '$apt_conf' > \"\$1\"/etc/apt/apt.conf.d/docker-clean"
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/apt/* "$1"/var/log/dpkg.log "$1"/var/log/alternatives.log'
  --customize-hook=': > "$1"/etc/machine-id; rm -f "$1"/etc/hostname; : > "$1"/etc/resolv.conf'
)
sources=(
  "deb $mirror bookworm main"
  "deb $mirror bookworm-updates main"
  "deb $security bookworm-security main"
)
# -slim, as debuerreotype-slimify makes it: these paths are removed and dpkg
# is told to skip them in later installs too; copyright files stay.
# (Patterns, quoted: they are globs for dpkg, not for this shell.)
slim_excludes=('/usr/share/doc/*' '/usr/share/info/*' '/usr/share/linda/*'
               '/usr/share/lintian/overrides/*' '/usr/share/locale/*' '/usr/share/man/*')
slim_includes=('/usr/share/doc/*/copyright')

key=$(printf '%s\n' "${opts[@]}" "${sources[@]}" | sha256sum | cut -c1-12)
slim_key=$(printf '%s\n' "$key" "${slim_excludes[@]}" "${slim_includes[@]}" no-old | sha256sum | cut -c1-12)
full="$cache/base/debian-12-$key.tar"
slim="$cache/base/debian-12-slim-$slim_key.tar"
fresh() { [[ $refresh -eq 0 && -s "$1" && -z "$(find "$1" -mtime +"$max_age")" ]]; }

if ! fresh "$full"; then
  echo "debian-base.sh: making debian:12 with mmdebstrap (a few minutes on a cold cache)" >&2
  rm -f "$cache/base/"debian-12-*.tar
  mkdir -p "$cache/debs"
  mmdebstrap "${opts[@]}" bookworm "$full.tmp" "${sources[@]}" >&2
  find "$cache/debs" -name '*.deb' -mtime +60 -delete
  mv "$full.tmp" "$full"
fi
if ! fresh "$slim" || [[ "$slim" -ot "$full" ]]; then
  echo "debian-base.sh: making debian:12-slim from it" >&2
  rm -f "$cache/base/"debian-12-slim-*.tar
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  tar -C "$root" -xpf "$full" --numeric-owner
  # /usr/share/doc/<pkg>/copyright is the one include; everything else under
  # the excluded paths goes.
  find "$root/usr/share/doc" -mindepth 1 ! -type d ! -path '*/usr/share/doc/*/copyright' -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  for p in "${slim_excludes[@]}"; do
    [[ "$p" == '/usr/share/doc/*' ]] && continue
    # shellcheck disable=SC2086  # $p is a glob, expanded inside the root
    rm -rf "$root"$p
  done
  # Backup copies dpkg and debconf keep of their databases, as Debian's
  # images leave them out.
  rm -f "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old
  {
    for p in "${slim_excludes[@]}"; do echo "path-exclude $p"; done
    for p in "${slim_includes[@]}"; do echo "path-include $p"; done
  } >"$root/etc/dpkg/dpkg.cfg.d/docker"
  tar -C "$root" --numeric-owner --sort=name -cf "$slim.tmp" .
  rm -rf "$root"
  trap - EXIT
  mv "$slim.tmp" "$slim"
fi
for f in "${flavours[@]}"; do
  if [[ "$f" == slim ]]; then echo "$slim"; else echo "$full"; fi
done
