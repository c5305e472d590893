# ctest label `torch2`: the engine built and tested for real on LibTorch 2.x (Debian trixie's 2.6, in a root
# cached outside the checkout), the way clusters run it inside NGC images. Steps in tests/compat/torch2.sh.
# The root is made once per machine (a minute from the Debian mirror); builds go through ccache in the root.
# Every step skips (77) where the root cannot be made: no mirror, or not root.
# Off inside the root's own build (the steps run there must not register themselves again).
option(SLIPWAY_TORCH2_TESTS "Register the torch2 label (LibTorch 2.x in a Debian trixie root)" ON)
if(NOT SLIPWAY_TORCH2_TESTS)
  return()
endif()
if(DEFINED ENV{SLIPWAY_TORCH2_CACHE})
  set(SLIPWAY_TORCH2_CACHE $ENV{SLIPWAY_TORCH2_CACHE})
else()
  set(SLIPWAY_TORCH2_CACHE $ENV{HOME}/.cache/slipway/torch2)
endif()
set(_torch2 bash ${CMAKE_CURRENT_LIST_DIR}/torch2.sh ${SLIPWAY_TORCH2_CACHE} ${PROJECT_SOURCE_DIR})

add_test(NAME torch2_root COMMAND ${_torch2} root)
set_tests_properties(torch2_root PROPERTIES LABELS torch2 TIMEOUT 1800 SKIP_RETURN_CODE 77
                     FIXTURES_SETUP torch2_root RESOURCE_LOCK torch2)
add_test(NAME torch2_build COMMAND ${_torch2} build)
set_tests_properties(torch2_build PROPERTIES LABELS torch2 TIMEOUT 3600 SKIP_RETURN_CODE 77
                     FIXTURES_REQUIRED torch2_root FIXTURES_SETUP torch2_build RESOURCE_LOCK torch2)

# The engine's test suites, by their labels; a test with two labels runs under the first one listed.
set(_torch2_suites contract tokenizer data model train dist engine plan)
set(_torch2_done "")
foreach(suite IN LISTS _torch2_suites)
  if(_torch2_done)
    list(JOIN _torch2_done "|" _skip)
    add_test(NAME torch2_${suite} COMMAND ${_torch2} suite ${suite} "^(${_skip})$")
  else()
    add_test(NAME torch2_${suite} COMMAND ${_torch2} suite ${suite})
  endif()
  set_tests_properties(torch2_${suite} PROPERTIES LABELS torch2 TIMEOUT 1800 SKIP_RETURN_CODE 77
                       FIXTURES_REQUIRED torch2_build RESOURCE_LOCK torch2)
  list(APPEND _torch2_done ${suite})
endforeach()

# tests/gpu/run.sh's build (vendor folder, torch.utils.cmake_prefix_path) and its CPU-side parts.
add_test(NAME torch2_gpu_suite_dry COMMAND ${_torch2} gpu)
set_tests_properties(torch2_gpu_suite_dry PROPERTIES LABELS torch2 TIMEOUT 3600 SKIP_RETURN_CODE 77
                     FIXTURES_REQUIRED torch2_root RESOURCE_LOCK torch2)

# The rendered Dockerfile's engine stage (torch.utils.cmake_prefix_path of python3-torch 2.6): needs the
# app's CLI to render it.
if(SLIPWAY_BUILD_APP)
  add_test(NAME torch2_dockerfile_engine COMMAND ${_torch2} dockerfile $<TARGET_FILE:slipway>)
  set_tests_properties(torch2_dockerfile_engine PROPERTIES LABELS torch2 TIMEOUT 3600 SKIP_RETURN_CODE 77
                       FIXTURES_REQUIRED torch2_root RESOURCE_LOCK torch2)
endif()
