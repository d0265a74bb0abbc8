# Install rules: headers, one library per layer, the exported package
# (corioTargets.cmake with namespace corio::, corioConfig.cmake,
# corioConfigVersion.cmake) and corio.pc. Included once from the top level.

include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

set(CORIO_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/corio")
get_property(_corio_layers GLOBAL PROPERTY CORIO_LAYERS)
get_property(_corio_compiled_layers GLOBAL PROPERTY CORIO_COMPILED_LAYERS)

if(EXISTS "${PROJECT_SOURCE_DIR}/include/")
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/"
    DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
endif()
install(FILES "${PROJECT_BINARY_DIR}/include/corio/version.hpp"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/corio")

set(_corio_targets corio)
foreach(layer IN LISTS _corio_layers)
  list(APPEND _corio_targets corio_${layer})
endforeach()
install(TARGETS ${_corio_targets}
  EXPORT corioTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT corioTargets
  NAMESPACE corio::
  DESTINATION "${CORIO_CMAKE_INSTALL_DIR}")

# Which packages corioConfig.cmake must find: the public ones always, the private
# ones too when the layers are static libraries ($<LINK_ONLY:fmt::fmt>).
set(CORIO_CONFIG_PACKAGES ${CORIO_PUBLIC_PACKAGES})
if(NOT BUILD_SHARED_LIBS)
  list(APPEND CORIO_CONFIG_PACKAGES ${CORIO_PRIVATE_PACKAGES})
endif()
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/corioConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/corioConfig.cmake"
  INSTALL_DESTINATION "${CORIO_CMAKE_INSTALL_DIR}")
# Semantic versioning: before 1.0 a minor release may break the API, so 0.1
# accepts 0.1.x only; from 1.0 on, any release of the same major version.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_corio_compatibility SameMinorVersion)
else()
  set(_corio_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/corioConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY ${_corio_compatibility})
install(FILES
  "${PROJECT_BINARY_DIR}/corioConfig.cmake"
  "${PROJECT_BINARY_DIR}/corioConfigVersion.cmake"
  DESTINATION "${CORIO_CMAKE_INSTALL_DIR}")

# pkg-config: upper layers first on the link line (static link order). fmt and
# OpenSSL go to Requires for a static build so that plain `pkg-config --libs
# corio` links ("openssl" is libssl and libcrypto: the net layer calls both).
set(CORIO_PC_LIBS " -Wl,--undefined=corio_debug_layer")  # see the debug layer in CMakeLists.txt
list(REVERSE _corio_compiled_layers)
foreach(layer IN LISTS _corio_compiled_layers)
  string(APPEND CORIO_PC_LIBS " -lcorio_${layer}")
endforeach()
if(BUILD_SHARED_LIBS)
  set(CORIO_PC_REQUIRES "nlohmann_json")
  set(CORIO_PC_REQUIRES_PRIVATE "fmt openssl zlib")
else()
  set(CORIO_PC_REQUIRES "nlohmann_json fmt openssl zlib")
  set(CORIO_PC_REQUIRES_PRIVATE "")
endif()
# The optional C libraries, when what uses them is built: the database layers',
# and liburing (the core layer's io_uring probe).
set(_corio_pc_optional "")
foreach(_corio_db IN ITEMS "pg;libpq" "redis;hiredis")
  list(GET _corio_db 0 _layer)
  list(GET _corio_db 1 _pc)
  if(TARGET corio_${_layer})
    list(APPEND _corio_pc_optional ${_pc})
  endif()
endforeach()
if(LIBURING_FOUND)
  list(APPEND _corio_pc_optional liburing)
endif()
list(APPEND _corio_pc_optional libnghttp2)  # the http layer's HTTP/2
foreach(_pc IN LISTS _corio_pc_optional)
  if(BUILD_SHARED_LIBS)
    string(APPEND CORIO_PC_REQUIRES_PRIVATE " ${_pc}")
  else()
    string(APPEND CORIO_PC_REQUIRES " ${_pc}")
  endif()
endforeach()
# The paths are absolute and normalised ("/opt/corio/include", never
# "lib/pkgconfig/../../include"), so corio.pc is written at install time, when
# the prefix is known (`cmake --install --prefix` changes it after configure).
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(CORIO_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(CORIO_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(CORIO_PC_PREFIX "@CORIO_PC_INSTALL_PREFIX@")  # filled in by the install step below
configure_file("${PROJECT_SOURCE_DIR}/cmake/corio.pc.in" "${PROJECT_BINARY_DIR}/corio.pc.in" @ONLY)
install(CODE "
  cmake_path(SET CORIO_PC_INSTALL_PREFIX NORMALIZE \"\${CMAKE_INSTALL_PREFIX}\")
  string(REGEX REPLACE \"(.)/$\" \"\\\\1\" CORIO_PC_INSTALL_PREFIX \"\${CORIO_PC_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/corio.pc.in\" \"${PROJECT_BINARY_DIR}/corio.pc\" @ONLY)")
install(FILES "${PROJECT_BINARY_DIR}/corio.pc"
  DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
