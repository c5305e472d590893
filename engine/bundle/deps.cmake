# The engine's third-party libraries when SLIPWAY_BUNDLED_DEPS is on (the engine bundle, built on a cluster
# whose image has no -dev package of them): nlohmann_json and CLI11 from the header copies the bundle carries
# in third_party/include, and PCRE2 compiled from Debian's source tarball of it, pinned by its SHA-256. Defines
# the targets find_package would (nlohmann_json::nlohmann_json, CLI11::CLI11) and slipway_pcre2.
include(${CMAKE_CURRENT_LIST_DIR}/pcre2_source.cmake)
enable_language(C)  # PCRE2; here, at the top directory's scope, as CMake requires
set(SLIPWAY_THIRD_PARTY_DIR ${PROJECT_SOURCE_DIR}/third_party CACHE PATH
    "The bundle's third_party folder: include/ (nlohmann, CLI) and pcre2_${SLIPWAY_PCRE2_VERSION}.orig.tar.gz")

function(slipway_bundled_header_library target include_dir)
  if(NOT EXISTS ${include_dir})
    message(FATAL_ERROR "SLIPWAY_BUNDLED_DEPS: ${include_dir} is missing (is this an engine bundle?)")
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${include_dir})
endfunction()

function(slipway_bundled_pcre2)
  set(tarball ${SLIPWAY_THIRD_PARTY_DIR}/pcre2_${SLIPWAY_PCRE2_VERSION}.orig.tar.gz)
  file(SHA256 ${tarball} hash)
  if(NOT hash STREQUAL SLIPWAY_PCRE2_SHA256)
    message(FATAL_ERROR "${tarball}: SHA-256 ${hash}, expected ${SLIPWAY_PCRE2_SHA256}")
  endif()
  set(root ${PROJECT_BINARY_DIR}/third_party)
  file(ARCHIVE_EXTRACT INPUT ${tarball} DESTINATION ${root})
  set(src ${root}/pcre2-${SLIPWAY_PCRE2_VERSION}/src)
  # What PCRE2's own CMake would generate, from the generic copies it ships.
  configure_file(${src}/config.h.generic ${src}/config.h COPYONLY)
  configure_file(${src}/pcre2.h.generic ${src}/pcre2.h COPYONLY)
  configure_file(${src}/pcre2_chartables.c.dist ${src}/pcre2_chartables.c COPYONLY)
  set(names auto_possess chartables compile config context convert dfa_match error extuni find_bracket
      jit_compile maketables match match_data newline ord2utf pattern_info script_run serialize string_utils
      study substitute substring tables ucd valid_utf xclass)
  list(TRANSFORM names PREPEND ${src}/pcre2_)
  list(TRANSFORM names APPEND .c)
  add_library(slipway_pcre2 STATIC ${names})
  target_include_directories(slipway_pcre2 SYSTEM PUBLIC ${src})
  target_compile_definitions(slipway_pcre2 PUBLIC PCRE2_STATIC PRIVATE HAVE_CONFIG_H SUPPORT_UNICODE SUPPORT_JIT
                             PCRE2_CODE_UNIT_WIDTH=8)
  set_target_properties(slipway_pcre2 PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

slipway_bundled_header_library(nlohmann_json::nlohmann_json ${SLIPWAY_THIRD_PARTY_DIR}/include)
slipway_bundled_header_library(CLI11::CLI11 ${SLIPWAY_THIRD_PARTY_DIR}/include)
slipway_bundled_pcre2()
