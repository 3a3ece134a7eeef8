# Installation: `cmake --install build/release [--prefix P]` puts
#   include/hcudp/*.h                     the public API (nothing from src/)
#   lib/libhcudp.so.<ver> (+ .so.0, .so)  the shared library, SOVERSION 0
#   bin/hcu-dp-daemon, bin/hcuctl         when those targets exist
#   lib/cmake/hcudp/                      find_package(hcudp) -> hcudp::hcudp
#   lib/pkgconfig/hcudp.pc                pkg-config hcudp
#   share/hcu-device-plugin/nodes/*.yaml  the shipped SimNodes (hcuctl --sim-node)
# Install components match the .deb packages (cmake/cpack.cmake): libhcudp0
# (the shared library), libhcudp-dev (headers, namelink, CMake package,
# pkg-config), hcuctl (the CLI and the SimNodes) and daemon (hcu-dp-daemon,
# shipped in the image, not as a package).
# Everything is relocatable: the package files find the prefix relative to
# themselves, so installing with another --prefix than configured works.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The public headers are C++17; consumers of hcudp::hcudp get that requirement.
target_compile_features(hcudp INTERFACE cxx_std_17)

install(TARGETS hcudp
  EXPORT hcudpTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT libhcudp0
          NAMELINK_COMPONENT libhcudp-dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT libhcudp-dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT libhcudp0)
install(DIRECTORY "${CMAKE_SOURCE_DIR}/libhcudp/include/hcudp"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT libhcudp-dev
  FILES_MATCHING PATTERN "*.h")

# The binaries find libhcudp next to them (../lib) wherever the tree lands.
# (The .deb packages drop this RUNPATH: there the library is in /usr/lib.)
foreach(_bin IN ITEMS hcu-dp-daemon hcuctl hcu-cdi-hook)
  if(TARGET ${_bin})
    # hcu-cdi-hook links none of our libraries (and is static outside the
    # sanitizer builds: no RUNPATH to rewrite).
    if(NOT _bin STREQUAL "hcu-cdi-hook")
      set_target_properties(${_bin} PROPERTIES
        INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
    endif()
    set(_component hcuctl)
    if(_bin STREQUAL "hcu-dp-daemon" OR _bin STREQUAL "hcu-cdi-hook")
      set(_component daemon)
    endif()
    install(TARGETS ${_bin} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${_component})
  endif()
endforeach()
install(DIRECTORY "${CMAKE_SOURCE_DIR}/demo/nodes/"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/hcu-device-plugin/nodes"
  COMPONENT hcuctl
  FILES_MATCHING PATTERN "*.yaml")

# CMake package.
set(HCUDP_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/hcudp")
install(EXPORT hcudpTargets
  NAMESPACE hcudp::
  DESTINATION "${HCUDP_CMAKE_DIR}"
  COMPONENT libhcudp-dev)
configure_package_config_file(
  "${CMAKE_SOURCE_DIR}/cmake/hcudpConfig.cmake.in"
  "${CMAKE_BINARY_DIR}/hcudpConfig.cmake"
  INSTALL_DESTINATION "${HCUDP_CMAKE_DIR}")
# Same major version = compatible (the SOVERSION is the major version).
write_basic_package_version_file(
  "${CMAKE_BINARY_DIR}/hcudpConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  "${CMAKE_BINARY_DIR}/hcudpConfig.cmake"
  "${CMAKE_BINARY_DIR}/hcudpConfigVersion.cmake"
  DESTINATION "${HCUDP_CMAKE_DIR}"
  COMPONENT libhcudp-dev)

# pkg-config. libhcudp's dependencies are private (no third-party type in the
# public headers), so a shared-library consumer needs only -lhcudp; the
# Requires.private/Libs.private lines serve static linking.
file(RELATIVE_PATH HCUDP_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" HCUDP_PC_UP "${HCUDP_PC_UP}")
configure_file("${CMAKE_SOURCE_DIR}/cmake/hcudp.pc.in" "${CMAKE_BINARY_DIR}/hcudp.pc" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/hcudp.pc"
  DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
  COMPONENT libhcudp-dev)
