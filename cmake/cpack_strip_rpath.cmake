# CPACK_PRE_BUILD_SCRIPTS: runs on the staging trees before the packages are
# made. Drops the $ORIGIN/../lib RUNPATH of the installed binaries (the .deb
# puts libhcudp in /usr/lib, a default search directory).
file(GLOB_RECURSE _bins "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*/usr/bin/*")
foreach(_b IN LISTS _bins)
  file(RPATH_REMOVE FILE "${_b}")
endforeach()
