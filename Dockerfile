# hcu-device-plugin image: hcu-dp-daemon (the entrypoint) and hcuctl.
#
#   docker build --build-arg VERSION=$(git describe --tags --dirty) \
#     -t <registry>/hcu/admin/base/hcu-device-plugin:<tag> .
#
# The vendor libraries (libhydmi, librocm_smi64, hy-smi) are never in the
# image: the DaemonSet mounts the node's /opt/hyhal read-only and the daemon
# loads them from /opt/hyhal/lib at run time, so one image fits every driver
# version. The build context keeps .git (see .dockerignore) so `git describe`
# stamps the binaries; VERSION labels the image and should be the same string.

# --- build ------------------------------------------------------------------
FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config git ca-certificates ccache \
      protobuf-compiler libprotobuf-dev protobuf-compiler-grpc libgrpc++-dev \
      libyaml-cpp-dev rapidjson-dev \
      libssl-dev prometheus-cpp-dev \
 && rm -rf /var/lib/apt/lists/*
# Compiling needs no privileges.
RUN useradd --create-home --uid 10001 builder
USER builder
WORKDIR /home/builder/src
# Compiler cache. A plain `docker build` starts it empty (and discards it with
# the build stage). scripts/build-image.sh bind-mounts the host's shared
# cache read-only at /ccache (podman/buildah) and passes
# CCACHE_REMOTE_STORAGE=file:/ccache|read-only, so the objects of the
# host's build of the same sources are reused; paths are hashed relative to
# the source root on both sides. Objects are reused only where every header
# is the same, so the host needs the same Debian package versions (a host
# behind on e.g. linux-libc-dev compiles afresh here; nothing goes stale).
# ccache also hashes the locale (LANG, LC_*): the host's build runs with the
# same LANG (.ci/run), or none of its objects match here.
ARG CCACHE_REMOTE_STORAGE=""
ENV CCACHE_BASEDIR=/home/builder/src CCACHE_DIR=/home/builder/.cache/ccache LANG=C.UTF-8
COPY --chown=builder:builder . .
RUN cmake --preset release -DHCUDP_BUILD_TESTS=OFF \
 && cmake --build --preset release \
 && DESTDIR=/home/builder/out cmake --install build/release --prefix /usr/local --strip

# --- runtime ----------------------------------------------------------------
FROM debian:12-slim
ARG VERSION=unknown
LABEL org.opencontainers.image.title="hcu-device-plugin" \
      org.opencontainers.image.description="Kubernetes device plugin for Hygon HCU accelerators" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
# Runtime libraries of libhcudp, hcu-dp-daemon and hcuctl only (the kube
# client's TLS is OpenSSL's libssl3, which gRPC needs anyway). No pciutils:
# `hcuctl doctor` reads the PCI functions from sysfs, not through lspci.
# The gRPC and protobuf packages also ship libraries that neither binary
# loads (the unsecure and reflection variants, channelz, the protoc compiler
# library): dpkg leaves those files out, as the slim base does with the docs,
# and keeps the packages in its database, so scanners still see the
# versions. The `--version` run below fails if one of them is needed after all.
RUN printf 'path-exclude %s\n' \
      '/usr/lib/*/libgrpc_unsecure.so*' '/usr/lib/*/libgrpc_plugin_support.so*' \
      '/usr/lib/*/libgrpc++_unsecure.so*' '/usr/lib/*/libgrpc++_reflection.so*' \
      '/usr/lib/*/libgrpc++_alts.so*' '/usr/lib/*/libgrpc++_error_details.so*' \
      '/usr/lib/*/libgrpcpp_channelz.so*' '/usr/lib/*/libprotoc.so*' \
      >/etc/dpkg/dpkg.cfg.d/hcudp-unused-libraries \
 && apt-get update \
 && apt-get install -y --no-install-recommends \
      libgrpc++1.51 libgrpc29 libprotobuf32 libyaml-cpp0.7 \
      libssl3 libprometheus-cpp-core1.0 ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/log/apt/* /var/log/dpkg.log \
      /var/cache/debconf/*-old /var/lib/dpkg/*-old
COPY --from=build /home/builder/out/usr/local/bin/hcu-dp-daemon /home/builder/out/usr/local/bin/hcuctl /usr/local/bin/
# The CDI hook, static: the DaemonSet copies it to the host, where the
# container runtime runs it (doc/dra.md, "CDI specs").
COPY --from=build /home/builder/out/usr/local/bin/hcu-cdi-hook /usr/local/bin/
# Only the library file: COPY would turn the libhcudp.so.0 symlink into a
# second copy; ldconfig below makes the link.
COPY --from=build /home/builder/out/usr/local/lib/libhcudp.so.0.* /usr/local/lib/
# /opt/hyhal/lib is the node's vendor runtime, mounted by the DaemonSet.
ENV LD_LIBRARY_PATH=/usr/local/lib:/opt/hyhal/lib
# glibc's per-thread caches of freed chunks off: each thread that serves a
# call kept up to 7 chunks per size, which pinned pages of the heap (DRA mode
# after 100 prepare/unprepare rounds: -0.23 MiB private, the device-plugin
# mode -0.1 MiB, Allocate unchanged; BENCHMARKS.md). Only settable before
# the process starts; test/bench/dra_daemon_bench.cc reads it from here.
ENV GLIBC_TUNABLES=glibc.malloc.tcache_count=0
# Fails the build if any shared library of the two binaries is missing.
# /usr/local/hyhal: the host's, through the DaemonSets' read-only mount of the
# host's /usr/local at /host/usr/local (dangling where the host has none).
RUN ldconfig && hcu-dp-daemon --version && hcuctl version \
 && ln -s /host/usr/local/hyhal /usr/local/hyhal
# A non-root account for running hcuctl from this image (docker run --user
# hcudp ... hcuctl devices). The default user stays root: the daemon creates
# its sockets in kubelet's root-owned directory, and vendor manifests that do
# not set runAsUser must keep working when only the image changes.
RUN useradd --system --uid 65532 --no-create-home --shell /usr/sbin/nologin hcudp
USER 0
ENTRYPOINT ["/usr/local/bin/hcu-dp-daemon"]
