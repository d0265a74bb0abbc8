# Helpers used by corio's own CMakeLists. Not installed; consumers never see them.

include_guard(GLOBAL)

# corio_target_warnings(<target>)
#
# Warnings (and -Werror) for corio's own targets only, PRIVATE, and only when corio
# is the top-level project: a user's add_subdirectory/FetchContent build must not
# break because their compiler warns about something new.
function(corio_target_warnings target)
  if(NOT CORIO_WARNINGS)
    return()
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    return()
  endif()
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  # g++ 12 at -O3 reports -Wrestrict inside libstdc++'s own std::string
  # concatenation (GCC bug 105329, fixed in 13): not our code's warning.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(CORIO_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# corio_add_layer(<name> [UNITY] [ROOMS <folder>...] [DEPENDS <layer>...] [PUBLIC_LIBS <lib>...]
#                 [PRIVATE_LIBS <lib>...])
#
# One library per layer of DESIGN.md: target corio_<name>, alias corio::<name>,
# exported as corio::<name>, sources src/<name>/**/*.cpp and those of each ROOMS
# folder (src/<folder>/: a room of the layer's own, e.g. the executor in core,
# shown apart but compiled into the layer's library). DEPENDS names other
# layers (linked PUBLIC). fmt and Threads come with every layer (fmt PRIVATE, as
# ${CORIO_FMT_TARGET}: it never appears in public headers). src/ is a PRIVATE
# include directory, for headers internal to the library. A layer with no .cpp yet is an INTERFACE
# library, so the tree configures while a layer is still being written.
#
# UNITY: the layer is compiled in batches when CORIO_UNITY_BUILD is on (its
# hot files left out one by one: SKIP_UNITY_BUILD_INCLUSION).
#
# Layers must be added in dependency order (core first); the order is kept for
# the link line of corio.pc and for tests/CMakeLists.txt.
function(corio_add_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "UNITY" "" "ROOMS;DEPENDS;PUBLIC_LIBS;PRIVATE_LIBS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "corio_add_layer(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  set(target corio_${name})
  set(sources "")
  foreach(folder IN ITEMS ${name} ${arg_ROOMS})
    file(GLOB_RECURSE folder_sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/src/${folder}/*.cpp")
    list(APPEND sources ${folder_sources})
  endforeach()

  if(sources)
    add_library(${target} ${sources})
    set(scope PUBLIC)
    set_target_properties(${target} PROPERTIES
      VERSION ${PROJECT_VERSION}
      SOVERSION ${PROJECT_VERSION_MAJOR})
    target_include_directories(${target} PRIVATE "${PROJECT_SOURCE_DIR}/src")
    target_link_libraries(${target} PRIVATE ${CORIO_FMT_TARGET} ${arg_PRIVATE_LIBS})
    corio_target_warnings(${target})
    # A PCH of its own costs about as much as two translation units (2.2 s of
    # CPU at -O2): a small layer shares corio_pch's instead.
    list(LENGTH sources count)
    if(count GREATER_EQUAL 8)
      corio_target_pch(${target})
    else()
      corio_target_shared_pch(${target})
    endif()
    if(CORIO_UNITY_BUILD AND arg_UNITY)
      # A batch includes its .cpp files as g++ includes headers, so their
      # anonymous-namespace types draw -Wsubobject-linkage, a warning about
      # headers (tests/docs says the same of its generated code).
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON)
      if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
      endif()
    endif()
    set_property(GLOBAL APPEND PROPERTY CORIO_COMPILED_LAYERS ${name})
  else()
    message(STATUS "corio: layer '${name}' has no sources yet (INTERFACE library)")
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  endif()
  add_library(corio::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})

  target_compile_features(${target} ${scope} cxx_std_20)
  target_include_directories(${target} ${scope}
    "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>"
    "$<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>"
    "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  target_link_libraries(${target} ${scope} Threads::Threads ${arg_PUBLIC_LIBS})
  foreach(dep IN LISTS arg_DEPENDS)
    if(NOT TARGET corio_${dep})
      message(FATAL_ERROR "corio_add_layer(${name}): layer '${dep}' must be added first")
    endif()
    target_link_libraries(${target} ${scope} corio::${dep})
  endforeach()

  set_property(GLOBAL APPEND PROPERTY CORIO_LAYERS ${name})
endfunction()

# corio_target_pch(<target> [EXTRA <header>...])
#
# Precompiled standard headers for one of corio's own targets, when CORIO_PCH
# is on. About 90% of what a corio translation unit parses is libstdc++ (the
# core headers bring <chrono>, <functional>, <variant>, <mutex>...: 70,000 of
# hello_gather.cpp's 76,000 preprocessed lines), so a target of several
# translation units parses it once. EXTRA adds a target's own heavy headers
# (GoogleTest for the tests). A target of one translation unit gains nothing
# from a PCH of its own: see corio_target_shared_pch.
function(corio_target_pch target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "EXTRA")
  if(NOT CORIO_PCH)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE ${CORIO_PCH_HEADERS} ${arg_EXTRA})
endfunction()

# corio_target_shared_pch(<target>)
#
# For the one-file programs (examples, the corio tool) and the small layers:
# reuse the PCH of corio_pch (same standard headers) instead of building one each.
# g++ only: g++ checks that a PCH fits and quietly parses the headers when it
# does not; clang stops with an error when a -D differs, so there each
# program parses its headers.
function(corio_target_shared_pch target)
  if(CORIO_PCH AND TARGET corio_pch AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_precompile_headers(${target} REUSE_FROM corio_pch)
  endif()
endfunction()
