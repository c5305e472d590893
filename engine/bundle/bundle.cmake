# The engine bundle target (engine/bundle/make_bundle.sh): PROJECT_BINARY_DIR/slipway-engine-src.tar.gz, made
# with the app (which carries it to clusters; included only where the app is built) and remade when an engine
# source changes. PCRE2's tarball is downloaded once, checked against its SHA-256, into the cache
# (SLIPWAY_THIRD_PARTY_CACHE); without it (no network at the first configure) there is no bundle target, and
# the app says so when asked for the bundle.
include(${CMAKE_CURRENT_LIST_DIR}/pcre2_source.cmake)
set(SLIPWAY_THIRD_PARTY_CACHE "$ENV{HOME}/.cache/slipway/third_party" CACHE PATH
    "Where downloaded third-party sources (the engine bundle's PCRE2) are kept")
set(_pcre2 ${SLIPWAY_THIRD_PARTY_CACHE}/pcre2_${SLIPWAY_PCRE2_VERSION}.orig.tar.gz)
if(EXISTS ${_pcre2})
  file(SHA256 ${_pcre2} _hash)
endif()
if(NOT _hash STREQUAL SLIPWAY_PCRE2_SHA256)
  file(DOWNLOAD ${SLIPWAY_PCRE2_URL} ${_pcre2}.part EXPECTED_HASH SHA256=${SLIPWAY_PCRE2_SHA256}
       STATUS _status TIMEOUT 120)
  list(GET _status 0 _code)
  if(_code EQUAL 0)
    file(RENAME ${_pcre2}.part ${_pcre2})
  else()
    file(REMOVE ${_pcre2}.part)
    message(WARNING "No engine bundle: ${SLIPWAY_PCRE2_URL} could not be fetched (${_status})")
    return()
  endif()
endif()

set(SLIPWAY_ENGINE_BUNDLE ${PROJECT_BINARY_DIR}/slipway-engine-src.tar.gz)
file(GLOB_RECURSE _engine_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/engine/*)
find_path(SLIPWAY_NLOHMANN_INCLUDE_DIR nlohmann/json.hpp)
find_path(SLIPWAY_CLI11_INCLUDE_DIR CLI/CLI.hpp)
if(NOT SLIPWAY_NLOHMANN_INCLUDE_DIR OR NOT SLIPWAY_CLI11_INCLUDE_DIR)
  message(WARNING "No engine bundle: the nlohmann-json or CLI11 headers it copies were not found")
  return()
endif()
add_custom_command(
  OUTPUT ${SLIPWAY_ENGINE_BUNDLE}
  COMMAND bash ${PROJECT_SOURCE_DIR}/engine/bundle/make_bundle.sh ${PROJECT_SOURCE_DIR} ${SLIPWAY_ENGINE_BUNDLE}
          ${SLIPWAY_NLOHMANN_INCLUDE_DIR} ${SLIPWAY_CLI11_INCLUDE_DIR} ${_pcre2} ${PROJECT_VERSION}
  DEPENDS ${_engine_files} ${PROJECT_SOURCE_DIR}/CMakeLists.txt ${_pcre2}
  COMMENT "Packing the engine bundle")
add_custom_target(engine_bundle ALL DEPENDS ${SLIPWAY_ENGINE_BUNDLE})
install(FILES ${SLIPWAY_ENGINE_BUNDLE} DESTINATION ${CMAKE_INSTALL_DATADIR}/slipway)
