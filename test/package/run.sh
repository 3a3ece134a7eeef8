#!/usr/bin/env bash
# The .deb packages, made and used as an admin and an embedder would:
#   1. cpack -G DEB makes hcuctl, libhcudp0 and libhcudp-dev;
#   2. dpkg-deb: names, version, contents, shlibdeps-made Depends, no RUNPATH;
#      lintian (if installed) finds no error;
#   3. a fresh debian:12 root (scripts/debian-base.sh) gets the three with
#      dpkg -i, their dependencies from Debian's archive (apt-get -f install);
#      there `hcuctl devices` on the shipped k100ai-8 SimNode prints the
#      golden output, and test/consumer/project builds against libhcudp-dev
#      with find_package(hcudp) and with pkg-config, and lists 8 cards.
#   run.sh <source-dir> <build-dir> <work-dir>
# Needs root (chroot, mounts in a private mount namespace). Downloaded .debs
# are kept in ~/.cache/hcudp-image/apt-archives.
set -euo pipefail
src=$1 build=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (chroot into a fresh root)"
rm -rf "$work"
mkdir -p "$work/debs"

echo "== cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$work/cpack" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
for p in hcuctl libhcudp0 libhcudp-dev; do
  f=$(find "$work/cpack" -maxdepth 1 -name "${p}_*.deb")
  [[ -n "$f" && $(wc -l <<<"$f") -eq 1 ]] || fail "want one ${p}_*.deb, found: $f"
  cp "$f" "$work/debs/"
  declare "deb_${p//-/_}=$work/debs/$(basename "$f")"
done
field() { dpkg-deb -f "$1" "$2"; }
version=$(field "$deb_libhcudp0" Version)
[[ "$version" =~ ^[0-9] ]] || fail "version '$version' does not start with a digit"
echo "ok   three packages, version $version"

echo "== dpkg-deb"
contents() { dpkg-deb -c "$1" | awk '{print $6}'; }
contents "$deb_hcuctl" >"$work/hcuctl.list"
grep -qx './usr/bin/hcuctl' "$work/hcuctl.list" || fail "hcuctl: no /usr/bin/hcuctl"
grep -qx './usr/share/hcu-device-plugin/nodes/k100ai-8.yaml' "$work/hcuctl.list" || fail "hcuctl: no SimNodes"
! grep -q 'hcu-dp-daemon' "$work/hcuctl.list" || fail "hcuctl: carries the daemon"
contents "$deb_libhcudp0" >"$work/lib.list"
grep -qx './usr/lib/libhcudp.so.0' "$work/lib.list" || fail "libhcudp0: no libhcudp.so.0"
! grep -q 'libhcudp.so$' "$work/lib.list" || fail "libhcudp0: carries the -dev namelink"
! grep -q '/include/' "$work/lib.list" || fail "libhcudp0: carries headers"
contents "$deb_libhcudp_dev" >"$work/dev.list"
for f in ./usr/include/hcudp/backend.h ./usr/lib/libhcudp.so ./usr/lib/cmake/hcudp/hcudpConfig.cmake \
         ./usr/lib/pkgconfig/hcudp.pc; do
  grep -qx "$f" "$work/dev.list" || fail "libhcudp-dev: no $f"
done
for p in hcuctl libhcudp0 libhcudp-dev; do
  d="deb_${p//-/_}"
  grep -qx "./usr/share/doc/$p/copyright" <(contents "${!d}") || fail "$p: no copyright file"
done
# Depends made by dpkg-shlibdeps from the ELF files, not written by hand.
lib_deps=$(field "$deb_libhcudp0" Depends)
for d in libc6 libstdc++6 libyaml-cpp0.7 libssl3; do
  grep -qF "$d (>= " <<<"$lib_deps" || fail "libhcudp0 Depends lacks $d: $lib_deps"
done
ctl_deps=$(field "$deb_hcuctl" Depends)
for d in libgrpc++1.51 libprotobuf32; do   # hcuctl talks gRPC to the daemon
  grep -qF "$d (>= " <<<"$ctl_deps" || fail "hcuctl Depends lacks $d: $ctl_deps"
done
grep -qF "libhcudp0 (= $version)" <<<"$(field "$deb_hcuctl" Depends)" || fail "hcuctl does not depend on libhcudp0 (= $version)"
grep -qF "libhcudp0 (= $version)" <<<"$(field "$deb_libhcudp_dev" Depends)" || fail "libhcudp-dev does not depend on libhcudp0 (= $version)"
dpkg-deb --ctrl-tarfile "$deb_libhcudp0" | tar -xO ./shlibs 2>/dev/null | grep -q '^libhcudp 0 libhcudp0' \
  || fail "libhcudp0 has no shlibs file"
mkdir -p "$work/x"
dpkg-deb -x "$deb_hcuctl" "$work/x"
! readelf -d "$work/x/usr/bin/hcuctl" | grep -q 'RUNPATH\|RPATH' || fail "hcuctl keeps a RUNPATH"
echo "ok   contents, copyright, shlibdeps Depends ($lib_deps), shlibs, no RUNPATH"

if command -v lintian >/dev/null; then
  echo "== lintian"
  # Tags that do not apply to a locally built upstream package (no Debian
  # changelog or source package) are left out; every other error fails.
  lintian --fail-on error --tag-display-limit 0 \
    --suppress-tags no-changelog,debian-changelog-file-missing,changelog-file-missing-in-native-package \
    "$work"/debs/*.deb | tee "$work/lintian.log" || fail "lintian reports errors"
  echo "ok   lintian: no errors ($(grep -c '^W:' "$work/lintian.log" || true) warnings)"
fi

echo "== dpkg -i into a fresh debian:12 root"
base=$("$src/scripts/debian-base.sh" full)
rootfs="$work/root"
mkdir -p "$rootfs"
tar -C "$rootfs" -xpf "$base" --numeric-owner
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
# Keep downloaded .debs across runs (the base removes them after installs).
rm -f "$rootfs/etc/apt/apt.conf.d/docker-clean"
archives=${HCUDP_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hcudp-image}/apt-archives
mkdir -p "$archives/partial" "$rootfs/debs"
cp "$work"/debs/*.deb "$rootfs/debs/"
cp -r "$src/test/consumer/project" "$rootfs/consumer"
cat >"$rootfs/test.sh" <<EOF
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# dpkg -i leaves the dependencies unmet in a fresh root; apt-get -f install
# brings exactly what the packages declare.
dpkg -i /debs/*.deb >/dev/null 2>&1 || true
apt-get -f install -y -qq >/dev/null
dpkg -s hcuctl libhcudp0 libhcudp-dev | grep -c '^Status: install ok installed' | grep -qx 3
echo "installed: \$(dpkg-query -W -f '\${Package} \${Version}, ' hcuctl libhcudp0 libhcudp-dev)"
hcuctl --backend=sim --sim-node=/usr/share/hcu-device-plugin/nodes/k100ai-8.yaml devices -o json >/devices.json
apt-get install -y -qq g++ cmake make pkg-config >/dev/null
cmake -S /consumer -B /consumer-build >/dev/null
cmake --build /consumer-build >/dev/null
/consumer-build/hcudp_consumer /usr/share/hcu-device-plugin/nodes/k100ai-8.yaml >/cmake.out
g++ -std=c++17 -o /pc_consumer /consumer/main.cc \$(pkg-config --cflags --libs hcudp)
/pc_consumer /usr/share/hcu-device-plugin/nodes/k100ai-8.yaml >/pc.out
EOF
unshare --mount --fork sh -c '
  set -e
  mount --make-rprivate /
  mount --bind "$2" "$1/var/cache/apt/archives"
  mount -t proc proc "$1/proc"
  exec chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root /bin/sh /test.sh
' sh "$rootfs" "$archives" || fail "installing or using the packages in the fresh root"
diff -u "$src/test/hcuctl/golden/k100ai-8.devices.json" "$rootfs/devices.json" \
  || fail "hcuctl devices from the package differs from the golden output"
grep -qx 'cards: 8' "$rootfs/cmake.out" || fail "find_package consumer did not list 8 cards"
cmp -s "$rootfs/cmake.out" "$rootfs/pc.out" || fail "the find_package and pkg-config consumers disagree"
echo "ok   hcuctl devices (golden), consumer via find_package and pkg-config: 8 cards"
rm -rf "$rootfs"
echo "ok   package_deb"
