# The build targets a CTest selection needs, so that CI builds only what the
# tests it runs use (the asan suite skips bench, deploy, image and package:
# their programs need not be compiled under the sanitizers).
#
#   cmake -DBUILD_DIR=build/asan [-DLABEL_EXCLUDE=<regex>] [-DLABEL_INCLUDE=<regex>]
#         -DOUT=<file> -P cmake/suite_targets.cmake
#   cmake --build build/asan --target $(cat <file>)
#
# It reads the CTestTestfile.cmake files that CMake generated (the tests as
# `ctest -N` sees them; `ctest --show-only` cannot tell, since it names a
# test's program only once that exists), selects tests with the label
# regexes as `ctest -L/-LE` do (a test is excluded when any label matches),
# and writes, one a line, every file in the build tree that a selected test
# runs, takes as an argument (or an option's value, --opt=<path>) or lists
# in REQUIRED_FILES, and that a build rule makes. Ninja builds such a file
# with its dependencies
# (add_dependencies: the daemon, hcuctl, the stub vendor libraries...).
# A test that needs a build output it does not name on its command line
# declares it with REQUIRED_FILES (test/demo, test/consumer).
cmake_minimum_required(VERSION 3.25)
if(NOT BUILD_DIR OR NOT OUT)
  message(FATAL_ERROR "usage: cmake -DBUILD_DIR=<dir> -DOUT=<file> [-DLABEL_EXCLUDE=re] "
                      "[-DLABEL_INCLUDE=re] -P suite_targets.cmake")
endif()
get_filename_component(BUILD_DIR "${BUILD_DIR}" ABSOLUTE)
if(NOT EXISTS "${BUILD_DIR}/CTestTestfile.cmake" OR NOT EXISTS "${BUILD_DIR}/build.ninja")
  message(FATAL_ERROR "suite_targets: ${BUILD_DIR} is not a configured Ninja build with tests")
endif()

# The generated files call these three; here they record instead of register.
function(add_test name)
  set_property(GLOBAL APPEND PROPERTY _st_tests "${name}")
  set_property(GLOBAL PROPERTY "_st_args_${name}" "${ARGN}")
endfunction()
function(set_tests_properties)
  # ARGV<i>, not ARGN: a value such as LABELS "a;b" is one argument.
  set(_names "")
  set(_i 0)
  while(_i LESS ARGC AND NOT "${ARGV${_i}}" STREQUAL "PROPERTIES")
    list(APPEND _names "${ARGV${_i}}")
    math(EXPR _i "${_i} + 1")
  endwhile()
  math(EXPR _i "${_i} + 1")
  while(_i LESS ARGC)
    set(_key "${ARGV${_i}}")
    math(EXPR _i "${_i} + 1")
    if(_key STREQUAL "LABELS" OR _key STREQUAL "REQUIRED_FILES")
      foreach(_t IN LISTS _names)
        set_property(GLOBAL PROPERTY "_st_${_key}_${_t}" "${ARGV${_i}}")
      endforeach()
    endif()
    math(EXPR _i "${_i} + 1")
  endwhile()
endfunction()
function(subdirs)
  foreach(_d IN LISTS ARGN)
    if(NOT IS_ABSOLUTE "${_d}")
      set(_d "${_st_current}/${_d}")
    endif()
    if(EXISTS "${_d}/CTestTestfile.cmake")
      set(_st_current "${_d}")
      include("${_d}/CTestTestfile.cmake")
    endif()
  endforeach()
endfunction()
# The paths in the generated files start with the build directory as CMake
# spelled it (which may differ from ours through a symlink).
file(STRINGS "${BUILD_DIR}/CTestTestfile.cmake" _line REGEX "^# Build directory: " LIMIT_COUNT 1)
string(REGEX REPLACE "^# Build directory: " "" _cmake_build_dir "${_line}")
if(_cmake_build_dir)
  set(BUILD_DIR "${_cmake_build_dir}")
endif()
set(_st_current "${BUILD_DIR}")
include("${BUILD_DIR}/CTestTestfile.cmake")

# The files build rules make: `ninja -t targets all` lists every output.
execute_process(COMMAND ninja -C "${BUILD_DIR}" -t targets all
                OUTPUT_VARIABLE _ninja RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "suite_targets: ninja -t targets all failed in ${BUILD_DIR}: ${_err}")
endif()
string(REGEX MATCHALL "[^\n]+" _lines "${_ninja}")
set(_outputs "")
foreach(_l IN LISTS _lines)
  string(REGEX REPLACE ": [^:]*$" "" _o "${_l}")
  list(APPEND _outputs "${_o}")
endforeach()

get_property(_all GLOBAL PROPERTY _st_tests)
string(LENGTH "${BUILD_DIR}/" _prefix_len)
set(_targets "")
set(_selected 0)
foreach(_t IN LISTS _all)
  get_property(_labels GLOBAL PROPERTY "_st_LABELS_${_t}")
  set(_keep TRUE)
  if(LABEL_INCLUDE)
    set(_keep FALSE)
    foreach(_l IN LISTS _labels)
      if(_l MATCHES "${LABEL_INCLUDE}")
        set(_keep TRUE)
      endif()
    endforeach()
  endif()
  if(LABEL_EXCLUDE)
    foreach(_l IN LISTS _labels)
      if(_l MATCHES "${LABEL_EXCLUDE}")
        set(_keep FALSE)
      endif()
    endforeach()
  endif()
  if(NOT _keep)
    continue()
  endif()
  math(EXPR _selected "${_selected} + 1")
  get_property(_args GLOBAL PROPERTY "_st_args_${_t}")
  get_property(_req GLOBAL PROPERTY "_st_REQUIRED_FILES_${_t}")
  foreach(_a IN LISTS _args _req)
    # A path also counts as the value of an option: --smoke-kubelet=<path>.
    string(REGEX REPLACE "^-[-A-Za-z0-9_]*=" "" _a "${_a}")
    string(FIND "${_a}" "${BUILD_DIR}/" _at)
    if(_at EQUAL 0)
      string(SUBSTRING "${_a}" ${_prefix_len} -1 _rel)
      if(_rel IN_LIST _outputs)
        list(APPEND _targets "${_rel}")
      endif()
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES _targets)
list(SORT _targets)
if(NOT _targets)
  message(FATAL_ERROR "suite_targets: no build outputs found for the ${_selected} selected tests")
endif()
list(JOIN _targets "\n" _text)
file(WRITE "${OUT}" "${_text}\n")
list(LENGTH _targets _n)
message(STATUS "suite_targets: ${_selected} tests need ${_n} build outputs (${OUT})")
