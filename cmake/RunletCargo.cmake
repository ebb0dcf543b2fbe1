# Builds librunlet.so and librunlet.a with cargo and defines runlet::runlet_shared,
# runlet::runlet_static and runlet::runlet (the shared one, or the static one when
# RUNLET_USE_STATIC is set): the names an installed package exports too.
include_guard(GLOBAL)

find_program(RUNLET_CARGO cargo REQUIRED)
find_package(Threads REQUIRED)

set(RUNLET_ROOT "${CMAKE_CURRENT_LIST_DIR}/..")
file(READ "${RUNLET_ROOT}/Cargo.toml" _runlet_manifest)
if(NOT _runlet_manifest MATCHES "\\[workspace\\.package\\][^[]*version = \"([0-9]+\\.[0-9]+\\.[0-9]+)\"")
  message(FATAL_ERROR "no [workspace.package] version in Cargo.toml")
endif()
set(RUNLET_VERSION "${CMAKE_MATCH_1}")
set(RUNLET_SONAME "librunlet.so.${RUNLET_VERSION}")

set(RUNLET_CARGO_PROFILE "debug" CACHE STRING "The cargo profile librunlet is built with: debug or release")
if(DEFINED ENV{CARGO_TARGET_DIR})
  set(_runlet_target "$ENV{CARGO_TARGET_DIR}")
else()
  set(_runlet_target "${RUNLET_ROOT}/target")
endif()
set(RUNLET_CARGO_TARGET_DIR "${_runlet_target}" CACHE PATH "cargo's target directory")
if(RUNLET_CARGO_PROFILE STREQUAL "release")
  set(_runlet_profile_flag --release)
else()
  set(_runlet_profile_flag)
endif()
set(_runlet_built "${RUNLET_CARGO_TARGET_DIR}/${RUNLET_CARGO_PROFILE}")

# Opt-in parts of librunlet, comma-separated: `mcp` (MCP servers from the runtime options) and
# `postgres` (the PostgreSQL journal and its workers). Without one, its options are refused with
# RUNLET_ERR_UNSUPPORTED.
set(RUNLET_FEATURES "" CACHE STRING "Optional parts of librunlet, comma-separated: mcp, postgres, web, otlp")
if(RUNLET_FEATURES)
  set(_runlet_features_flag --features "${RUNLET_FEATURES}")
else()
  set(_runlet_features_flag)
endif()

# Libraries the static archive needs (rustc --print native-static-libs; scripts/test checks it).
set(RUNLET_NATIVE_STATIC_LIBS gcc_s util rt pthread m dl)

# The libraries, named as installed: librunlet.so is a link to librunlet.so.<version> (the SONAME).
set(RUNLET_LIBRARY_DIR "${CMAKE_BINARY_DIR}/runlet-lib")
add_custom_target(runlet_cargo ALL
  COMMAND "${CMAKE_COMMAND}" -E env "CARGO_TARGET_DIR=${RUNLET_CARGO_TARGET_DIR}"
          "${RUNLET_CARGO}" build --locked -p runlet-capi ${_runlet_profile_flag} ${_runlet_features_flag}
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${RUNLET_LIBRARY_DIR}"
  COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${_runlet_built}/librunlet.so" "${RUNLET_LIBRARY_DIR}/${RUNLET_SONAME}"
  COMMAND "${CMAKE_COMMAND}" -E create_symlink "${RUNLET_SONAME}" "${RUNLET_LIBRARY_DIR}/librunlet.so"
  COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${_runlet_built}/librunlet.a" "${RUNLET_LIBRARY_DIR}/librunlet.a"
  BYPRODUCTS "${RUNLET_LIBRARY_DIR}/${RUNLET_SONAME}" "${RUNLET_LIBRARY_DIR}/librunlet.so" "${RUNLET_LIBRARY_DIR}/librunlet.a"
  WORKING_DIRECTORY "${RUNLET_ROOT}"
  USES_TERMINAL
  VERBATIM)

add_library(runlet_shared INTERFACE)
target_link_libraries(runlet_shared INTERFACE "${RUNLET_LIBRARY_DIR}/${RUNLET_SONAME}")
target_include_directories(runlet_shared INTERFACE "${RUNLET_ROOT}/include")
add_dependencies(runlet_shared runlet_cargo)

add_library(runlet_static INTERFACE)
target_link_libraries(runlet_static INTERFACE "${RUNLET_LIBRARY_DIR}/librunlet.a" Threads::Threads ${RUNLET_NATIVE_STATIC_LIBS})
target_include_directories(runlet_static INTERFACE "${RUNLET_ROOT}/include")
add_dependencies(runlet_static runlet_cargo)

add_library(runlet::runlet_shared ALIAS runlet_shared)
add_library(runlet::runlet_static ALIAS runlet_static)
if(RUNLET_USE_STATIC)
  add_library(runlet::runlet ALIAS runlet_static)
else()
  add_library(runlet::runlet ALIAS runlet_shared)
endif()
