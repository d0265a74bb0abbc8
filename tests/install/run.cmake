# Driver for the `install.consumer` CTest test (see tests/CMakeLists.txt).
#   cmake -DCORIO_BUILD_DIR=... -DCORIO_CONFIG=... -DWORK_DIR=... -DCONSUMER_DIR=...
#         -DGENERATOR=... -DCXX=... [-DCXX_FLAGS=...] [-DEXE_LINKER_FLAGS=...] -P run.cmake
# 1. cmake --install the build tree into WORK_DIR/prefix;
# 2. configure, build and run CONSUMER_DIR against it (find_package(corio CONFIG));
# 3. compile and run the same main.cpp with flags from `pkg-config corio`.

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

step("configure consumer" "${CMAKE_COMMAND}"
  -S "${CONSUMER_DIR}" -B "${build}" -G "${GENERATOR}"
  "-DCMAKE_BUILD_TYPE=${CORIO_CONFIG}"
  "-DCMAKE_CXX_COMPILER=${CXX}"
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}"
  "-DCMAKE_PREFIX_PATH=${prefix}"
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
step("build consumer" "${CMAKE_COMMAND}" --build "${build}" --config "${CORIO_CONFIG}")
step("run consumer (CMake package)" "${build}/corio_consumer")

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
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
list(APPEND pc_flags "-Wl,-rpath,${pc_libdir}")  # for a BUILD_SHARED_LIBS=ON build
separate_arguments(cxx_flags UNIX_COMMAND "${CXX_FLAGS}")
separate_arguments(ld_flags UNIX_COMMAND "${EXE_LINKER_FLAGS}")
step("build consumer (pkg-config)" "${CXX}" -std=c++20 ${cxx_flags}
  "${CONSUMER_DIR}/main.cpp" -o "${WORK_DIR}/corio_consumer_pc" ${pc_flags} ${ld_flags})
step("run consumer (pkg-config)" "${WORK_DIR}/corio_consumer_pc")
