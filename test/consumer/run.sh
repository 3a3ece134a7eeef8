#!/usr/bin/env bash
# Installs the build tree to a temporary prefix and builds a stand-alone
# consumer against it twice: with find_package(hcudp) and with pkg-config.
# Both must list the 8 cards of demo/nodes/k100ai-8.yaml.
#   run.sh <source-dir> <build-dir> <work-dir>
set -euo pipefail
src=$1 build=$2 work=$3
node="$src/demo/nodes/k100ai-8.yaml"
[[ -f "$node" ]] || { echo "FAIL: $node is missing (the simulated nodes come with the sim work)" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"

fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== install to $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
libdir=$(dirname "$(find "$prefix" -name 'hcudp.pc' -path '*pkgconfig*' | head -1)")/..
libdir=$(cd "$libdir" && pwd)
for f in include/hcudp/backend.h include/hcudp/status.h include/hcudp/version.h \
         include/hcudp/node_state.h include/hcudp/node_watcher.h; do
  [[ -f "$prefix/$f" ]] || fail "$f not installed"
done
[[ -z "$(find "$prefix/include" -type f ! -path '*/include/hcudp/*.h')" ]] \
  || fail "installed headers other than include/hcudp/*.h"
# The HAMi codec is a folder of one-concept headers; the frontends' CLI
# plumbing (common/cli) and hcuctl's readable form are not library API.
[[ -f "$prefix/include/hcudp/hami/node_devices.h" ]] || fail "include/hcudp/hami/ not installed"
for gone in hami_codec.h flags.h option_flags.h; do
  [[ ! -e "$prefix/include/hcudp/$gone" ]] || fail "include/hcudp/$gone is installed"
done
soname=$(readlink "$libdir/libhcudp.so")
[[ "$soname" == libhcudp.so.0 ]] || fail "libhcudp.so -> $soname, want libhcudp.so.0"
[[ -f "$libdir/cmake/hcudp/hcudpConfig.cmake" && -f "$libdir/cmake/hcudp/hcudpConfigVersion.cmake" ]] \
  || fail "CMake package files missing"
echo "ok   headers, libhcudp.so -> $soname, CMake package, pkg-config file"

# Compiler ($CXX) and compile and link flags of the build under test (e.g.
# clang with -fsanitize=...).
read -r -a extra_flags <<<"${HCUDP_CONSUMER_FLAGS:-}"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

echo "== find_package(hcudp)"
cmake -S "$src/test/consumer/project" -B "$work/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="${CXX:-c++}" -DHCUDP_EXAMPLE_SOURCE="$src/doc/examples/list_and_create.cc" \
  -DHCUDP_WATCH_EXAMPLE_SOURCE="$src/doc/examples/watch_health.cc" \
  -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="${HCUDP_CONSUMER_FLAGS:-}" -DCMAKE_EXE_LINKER_FLAGS="${HCUDP_CONSUMER_FLAGS:-}" \
  >"$work/cmake-configure.log" \
  || { cat "$work/cmake-configure.log"; fail "configure against the CMake package"; }
cmake --build "$work/cmake" || fail "build against the CMake package"
"$work/cmake/hcudp_consumer" "$node" | tee "$work/cmake.out" || fail "find_package consumer exited non-zero"
grep -qx 'cards: 8' "$work/cmake.out" || fail "find_package consumer did not list 8 cards"

# doc/library.md's examples: the first C++ block under "## Example" and under
# "## Watching the node" (printed there without their 3-line header comments;
# the snippet that opens the page is a sketch, not a program). The first: 8
# cards listed, one vHCU created and destroyed.
doc_block() {  # <heading>
  awk -v h="$1" '$0 == h {s=1; next} /^## /{s=0} s && /^```c\+\+$/ {on=1; next}
                 on && /^```$/ {exit} on' "$src/doc/library.md"
}
example="$src/doc/examples/list_and_create.cc"
diff <(sed '1,3d' "$example") <(doc_block "## Example") \
  || fail "doc/library.md's example differs from $example"
watch_example="$src/doc/examples/watch_health.cc"
diff <(sed '1,3d' "$watch_example") <(doc_block "## Watching the node") \
  || fail "doc/library.md's node-watcher example differs from $watch_example"
check_example() {  # <binary> <output file>
  "$1" "$node" "$work/example-root-$(basename "$2")" | tee "$2" || fail "$1 exited non-zero"
  [[ "$(grep -c '^card ' "$2")" == 8 ]] || fail "$1 did not list 8 cards"
  grep -Eq '^vhcu [0-9]+ on 0000:[0-9a-f:.]+: /etc/vdev/vdev[0-9]+\.conf$' "$2" \
    || fail "$1 did not create a vHCU"
}
check_example "$work/cmake/list_and_create" "$work/example-cmake.out"
# The node-watcher example, run as test/watch runs the in-tree build: a
# health fault injected into the SimNode file is printed, and its recovery.
bash "$src/test/watch/watch_test.sh" "^card 0 0000:0b:00.0 is now Unhealthy" \
  "^card 0 0000:0b:00.0 is now Healthy" "$work/watch" "$src/demo/nodes/z100l-mixed.yaml" \
  "$work/cmake/watch_health" @NODE@ @ROOT@ || fail "the node-watcher example"

echo "== pkg-config hcudp"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pkg-config --exists hcudp || fail "pkg-config does not find hcudp"
[[ "$(pkg-config --modversion hcudp)" == "$(sed -n 's/^Version: //p' "$libdir/pkgconfig/hcudp.pc")" ]] || fail "version"
# shellcheck disable=SC2046
${CXX:-c++} -std=c++17 -O1 "${extra_flags[@]}" -o "$work/pc_consumer" \
  "$src/test/consumer/project/main.cc" \
  $(pkg-config --cflags --libs hcudp) -Wl,-rpath,"$(pkg-config --variable=libdir hcudp)" \
  || fail "build with pkg-config flags"
"$work/pc_consumer" "$node" | tee "$work/pc.out" || fail "pkg-config consumer exited non-zero"
grep -qx 'cards: 8' "$work/pc.out" || fail "pkg-config consumer did not list 8 cards"
cmp -s "$work/cmake.out" "$work/pc.out" || fail "the two consumers disagree"
# shellcheck disable=SC2046
${CXX:-c++} -std=c++17 -O1 "${extra_flags[@]}" -o "$work/pc_example" \
  "$src/doc/examples/list_and_create.cc" \
  $(pkg-config --cflags --libs hcudp) -Wl,-rpath,"$(pkg-config --variable=libdir hcudp)" \
  || fail "build the example with pkg-config flags"
check_example "$work/pc_example" "$work/example-pc.out"
cmp -s "$work/example-cmake.out" "$work/example-pc.out" || fail "the two examples disagree"
echo "ok   consumer_install"
