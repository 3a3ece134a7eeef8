#!/usr/bin/env bash
# Installs the Debian packages hcu-device-plugin builds and tests with.
# Idempotent: asks apt only for what is missing; safe to run again and again.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  lld  # links the test programs (test/CMakeLists.txt, HCUDP_TEST_LLD)
  protobuf-compiler libprotobuf-dev protobuf-compiler-grpc libgrpc++-dev
  libyaml-cpp-dev rapidjson-dev
  libboost-test-dev openssl
  libssl-dev  # the kube client's TLS: OpenSSL 3, which gRPC links as well
  prometheus-cpp-dev  # the daemon's metric types (its own /metrics server)
  python3 python3-jsonschema python3-yaml yamllint
)
# Node.js and npm run the pinned manifest validators (scripts/install-ci-tools.sh).
# Machines that already have a Node.js with npm (e.g. from another repository)
# keep it; otherwise Debian's are installed.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi
# Optional extras: clang and its sanitizer runtimes for the libFuzzer targets
# and the asan preset (HCUDP_EXTRAS=fuzz).
if [[ "${HCUDP_EXTRAS:-}" == *fuzz* ]]; then
  packages+=(clang-14 libclang-rt-14-dev)
fi
# Optional extras: the image and package tests (HCUDP_EXTRAS=release):
# buildah builds the image without a daemon, mmdebstrap makes the base images
# from Debian's archive, file/dpkg-dev serve cpack's shlibdeps, lintian checks
# the .debs; prometheus brings promtool, which tests the chart's alerts
# (deploy_alerts; skipped without it). podman, runc and busybox-static run
# real containers with the devices of our CDI specs (test/runtime, label
# runtime): runc because crun cannot run on hosts with hybrid cgroups,
# busybox-static for an image made without a registry.
if [[ "${HCUDP_EXTRAS:-}" == *release* ]]; then
  packages+=(buildah mmdebstrap file dpkg-dev lintian prometheus podman runc busybox-static)
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
