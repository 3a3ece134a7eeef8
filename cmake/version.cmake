# The version string comes from `git describe --tags --dirty --always` and is
# re-read at every build (not only at configure time); the generated file is
# rewritten only when the string changes, so nothing relinks needlessly.
set(HCUDP_VERSION_CC "${CMAKE_BINARY_DIR}/generated/hcudp_version.cc")
add_custom_target(hcudp_version_stamp
  BYPRODUCTS "${HCUDP_VERSION_CC}"
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DOUTPUT=${HCUDP_VERSION_CC}
          -DFALLBACK=${PROJECT_VERSION}
          -P ${CMAKE_SOURCE_DIR}/cmake/write_version.cmake
  COMMENT "version stamp")
