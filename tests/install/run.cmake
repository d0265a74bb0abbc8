# Driver for the `install.consumer` CTest test (see tests/CMakeLists.txt).
#   cmake -DCORIO_BUILD_DIR=... -DCORIO_CONFIG=... -DWORK_DIR=... -DCONSUMER_DIR=...
#         -DGENERATOR=... -DCXX=... [-DCXX_FLAGS=...] [-DEXE_LINKER_FLAGS=...]
#         [-DOTHER_CXX=...] -P run.cmake
# 1. cmake --install the build tree into WORK_DIR/prefix;
# 2. configure, build and run CONSUMER_DIR against it (find_package(corio CONFIG)),
#    with CXX and, when given, with OTHER_CXX (the other compiler the README names:
#    one package serves both); and run the installed `corio demo` (its example
#    programs are installed too);
# 3. check the version rule: before 1.0 only the same minor version is compatible;
# 4. compile and run the same main.cpp with flags from `pkg-config corio`, whose
#    paths must be the prefix's own, normalised.

cmake_minimum_required(VERSION 3.25)

foreach(var CORIO_BUILD_DIR WORK_DIR CONSUMER_DIR GENERATOR CXX)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT CORIO_CONFIG)
  set(CORIO_CONFIG Release)
endif()

function(step name)
  message(STATUS "install test: ${name}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc COMMAND_ECHO STDOUT)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: '${name}' failed (${rc})")
  endif()
endfunction()

set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/consumer-build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

step("install" "${CMAKE_COMMAND}" --install "${CORIO_BUILD_DIR}"
  --config "${CORIO_CONFIG}" --prefix "${prefix}")

# Configures, builds and runs the consumer in dir with compiler cxx.
function(consumer label dir cxx cxx_flags ld_flags)
  step("configure consumer (${label})" "${CMAKE_COMMAND}"
    -S "${CONSUMER_DIR}" -B "${dir}" -G "${GENERATOR}"
    "-DCMAKE_BUILD_TYPE=${CORIO_CONFIG}"
    "-DCMAKE_CXX_COMPILER=${cxx}"
    "-DCMAKE_CXX_FLAGS=${cxx_flags}"
    "-DCMAKE_EXE_LINKER_FLAGS=${ld_flags}"
    "-DCMAKE_PREFIX_PATH=${prefix}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  step("build consumer (${label})" "${CMAKE_COMMAND}" --build "${dir}" --config "${CORIO_CONFIG}")
  step("run consumer (${label})" "${dir}/corio_consumer")
endfunction()
consumer("CMake package" "${build}" "${CXX}" "${CXX_FLAGS}" "${EXE_LINKER_FLAGS}")
# The flags are the build's, for its compiler (its sanitizers): the other
# compiler gets none, and tests/CMakeLists.txt passes no OTHER_CXX for a
# sanitized build, whose runtime a plain consumer would lack.
if(OTHER_CXX)
  consumer("CMake package, ${OTHER_CXX}" "${WORK_DIR}/consumer-other" "${OTHER_CXX}" "" "")
endif()

# The installed tool finds the example programs its demo runs (libexec/corio).
if(EXISTS "${prefix}/bin/corio")
  step("installed corio demo" "${prefix}/bin/corio" demo --section 1)
endif()

# find_package(corio X) with the installed version: the configure step alone
# says whether X was accepted.
function(expect_version wanted accepted)
  execute_process(COMMAND "${CMAKE_COMMAND}"
      -S "${CONSUMER_DIR}" -B "${WORK_DIR}/version-${wanted}" -G "${GENERATOR}"
      "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_PREFIX_PATH=${prefix}"
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "-DCORIO_WANTED_VERSION=${wanted}"
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(accepted AND NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: find_package(corio ${wanted}) failed:\n${err}")
  elseif(NOT accepted AND rc EQUAL 0)
    message(FATAL_ERROR "install test: find_package(corio ${wanted}) accepted the installed corio")
  endif()
  message(STATUS "install test: find_package(corio ${wanted}) ${rc}, as expected")
endfunction()
file(GLOB version_file "${prefix}/lib*/cmake/corio/corioConfigVersion.cmake")
file(STRINGS "${version_file}" version_line REGEX "PACKAGE_VERSION \"")
string(REGEX MATCH "([0-9]+)\\.([0-9]+)\\.([0-9]+)" installed "${version_line}")
set(major ${CMAKE_MATCH_1})
set(minor ${CMAKE_MATCH_2})
math(EXPR next_minor "${minor} + 1")
expect_version("${major}.${minor}" TRUE)
expect_version("${installed}" TRUE)
expect_version("${major}.${next_minor}" FALSE)
if(major EQUAL 0 AND minor GREATER 0)
  math(EXPR prev_minor "${minor} - 1")
  expect_version("0.${prev_minor}" FALSE)  # 0.0 against 0.1: 0.x breaks at every minor
endif()

# pkg-config: same program, flags only from corio.pc. Skipped if pkg-config is absent.
find_program(PKG_CONFIG NAMES pkgconf pkg-config)
if(NOT PKG_CONFIG)
  message(STATUS "install test: pkg-config not found, skipping the corio.pc check")
  return()
endif()
file(GLOB pc_file "${prefix}/lib*/pkgconfig/corio.pc" "${prefix}/lib/*/pkgconfig/corio.pc")
if(NOT pc_file)
  message(FATAL_ERROR "install test: corio.pc not installed under ${prefix}")
endif()
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs corio
  OUTPUT_VARIABLE pc_flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install test: pkg-config --cflags --libs corio failed (${rc})")
endif()
execute_process(COMMAND "${PKG_CONFIG}" --variable=libdir corio
  OUTPUT_VARIABLE pc_libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND "${PKG_CONFIG}" --cflags-only-I corio
  OUTPUT_VARIABLE pc_include OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(pc_include UNIX_COMMAND "${pc_include}")
if(pc_flags MATCHES "/\\.\\.?/" OR NOT "-I${prefix}/include" IN_LIST pc_include
   OR NOT pc_libdir MATCHES "^${prefix}/lib")
  message(FATAL_ERROR "install test: corio.pc's paths are not ${prefix}'s, normalised: "
    "'${pc_flags}', libdir '${pc_libdir}'")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
list(APPEND pc_flags "-Wl,-rpath,${pc_libdir}")  # for a BUILD_SHARED_LIBS=ON build
separate_arguments(cxx_flags UNIX_COMMAND "${CXX_FLAGS}")
separate_arguments(ld_flags UNIX_COMMAND "${EXE_LINKER_FLAGS}")
step("build consumer (pkg-config)" "${CXX}" -std=c++20 ${cxx_flags}
  "${CONSUMER_DIR}/main.cpp" -o "${WORK_DIR}/corio_consumer_pc" ${pc_flags} ${ld_flags})
step("run consumer (pkg-config)" "${WORK_DIR}/corio_consumer_pc")
