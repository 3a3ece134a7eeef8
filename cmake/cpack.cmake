# Debian packages: `cpack -G DEB` in a build directory (after the build) makes
#   hcuctl_<ver>_<arch>.deb        /usr/bin/hcuctl and the SimNodes in
#                                  /usr/share/hcu-device-plugin/nodes/
#   libhcudp0_<ver>_<arch>.deb     /usr/lib/libhcudp.so.0*
#   libhcudp-dev_<ver>_<arch>.deb  headers, libhcudp.so, CMake package, pkg-config
# hcu-dp-daemon ships in the image only (install component "daemon").
# Dependencies on Debian's libraries come from dpkg-shlibdeps; libhcudp0 gets
# a shlibs file, so packages built against it depend on it correctly. The
# version is read from git when cpack runs (cmake/cpack_project_config.cmake).
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "hcu-device-plugin")
set(CPACK_PACKAGE_VENDOR "hcu-device-plugin developers")
# The Maintainer field. The default's .invalid domain (RFC 2606) marks it as
# unset: whoever publishes packages sets a real address here.
set(HCUDP_PACKAGE_CONTACT "hcu-device-plugin maintainers <maintainers@hcu-device-plugin.invalid>"
    CACHE STRING "Maintainer field of the .deb packages")
set(CPACK_PACKAGE_CONTACT "${HCUDP_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Kubernetes device plugin for Hygon HCU accelerators")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_PACKAGE_DIRECTORY "${CMAKE_BINARY_DIR}/packages")
set(CPACK_STRIP_FILES TRUE)
set(CPACK_RESOURCE_FILE_LICENSE "${CMAKE_SOURCE_DIR}/LICENSE")

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL hcuctl libhcudp0 libhcudp-dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Our own library is found in the staging tree; its dependency is stated below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${CMAKE_BINARY_DIR}/libhcudp")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")

set(CPACK_DEBIAN_HCUCTL_PACKAGE_NAME "hcuctl")
set(CPACK_DEBIAN_HCUCTL_PACKAGE_SECTION "admin")
set(CPACK_COMPONENT_HCUCTL_DESCRIPTION "Hygon HCU device plugin command-line tool
 hcuctl lists the HCU cards of a node (through the vendor libraries in
 /opt/hyhal, or a simulated node), their names and topology, and talks to
 a running hcu-dp-daemon. Simulated nodes are in
 /usr/share/hcu-device-plugin/nodes.")

set(CPACK_DEBIAN_LIBHCUDP0_PACKAGE_NAME "libhcudp0")
set(CPACK_DEBIAN_LIBHCUDP0_PACKAGE_SECTION "libs")
# (CPack has no per-package switch: only libhcudp0 holds a shared library.)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# dpkg runs ldconfig through this trigger (Debian policy 8.1.1); CPack's
# postinst/postrm call it as well, which is redundant but harmless.
set(CPACK_DEBIAN_LIBHCUDP0_PACKAGE_CONTROL_EXTRA "${CMAKE_SOURCE_DIR}/cmake/debian/triggers")
set(CPACK_DEBIAN_LIBHCUDP0_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_COMPONENT_LIBHCUDP0_DESCRIPTION "Hygon HCU device plugin library
 libhcudp discovers HCU cards through the vendor libraries, names and
 allocates them, and speaks the HAMi annotations. Shared library.")

set(CPACK_DEBIAN_LIBHCUDP-DEV_PACKAGE_NAME "libhcudp-dev")
set(CPACK_DEBIAN_LIBHCUDP-DEV_PACKAGE_SECTION "libdevel")
# shlibdeps finds nothing to scan here; pkg-config's Requires.private lines
# (yaml-cpp libssl libcrypto) must resolve, so their -dev packages are needed.
set(CPACK_DEBIAN_LIBHCUDP-DEV_PACKAGE_SHLIBDEPS OFF)
set(CPACK_COMPONENT_LIBHCUDP-DEV_DESCRIPTION "Hygon HCU device plugin library - development files
 Headers, the CMake package (find_package(hcudp) -> hcudp::hcudp) and the
 pkg-config file (hcudp) of libhcudp.")

# The binaries' $ORIGIN/../lib RUNPATH is for relocatable installs; in /usr it
# is pointless and lintian rejects it.
set(CPACK_PRE_BUILD_SCRIPTS "${CMAKE_SOURCE_DIR}/cmake/cpack_strip_rpath.cmake")
set(CPACK_PROJECT_CONFIG_FILE "${CMAKE_BINARY_DIR}/cpack_project_config.cmake")
configure_file("${CMAKE_SOURCE_DIR}/cmake/cpack_project_config.cmake.in"
               "${CMAKE_BINARY_DIR}/cpack_project_config.cmake" @ONLY)

# Debian's copyright file in every package.
foreach(_pkg hcuctl libhcudp0 libhcudp-dev)
  install(FILES "${CMAKE_SOURCE_DIR}/cmake/debian/copyright"
    DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/${_pkg}"
    COMPONENT ${_pkg}
    EXCLUDE_FROM_ALL)
endforeach()

include(CPack)
