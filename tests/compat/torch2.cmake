# ctest labels `torch2` and `torch-latest`: the engine built and tested for real on LibTorch 2.x, each in a
# Debian root cached outside the checkout, the way clusters run it inside NGC images. `torch2` is trixie's
# 2.6 (the nearest to the NGC images); `torch-latest` is forky's 2.14 (C++20), with HF transformers on CPU as
# the reference (tests/compat/hf_reference.py). Steps in tests/compat/torch2.sh. Each root is made once per
# machine (a minute or two from the Debian mirror); builds go through ccache in the root. Every step skips
# (77) where the root cannot be made: no mirror, or not root.
# Off inside the roots' own builds (the steps run there must not register themselves again).
option(SLIPWAY_TORCH2_TESTS "Register the torch2 and torch-latest labels (LibTorch 2.x in Debian roots)" ON)
if(NOT SLIPWAY_TORCH2_TESTS)
  return()
endif()
if(DEFINED ENV{SLIPWAY_TORCH2_CACHE})
  set(SLIPWAY_TORCH2_CACHE $ENV{SLIPWAY_TORCH2_CACHE})
else()
  set(SLIPWAY_TORCH2_CACHE $ENV{HOME}/.cache/slipway/torch2)
endif()

# One label on one Debian suite's root: tests PREFIX_root, PREFIX_build (one engine build, reused by every
# later step), PREFIX_<suite label> per engine suite, and the optional steps named by the flags:
# GPU_DRY (tests/gpu/run.sh's build and CPU-side parts), DOCKERFILE (a rendered Dockerfile's engine stage),
# HF_REFERENCE (the engine against HF transformers on CPU). Each runs alone: the roots share the machine's
# cores and the ccache.
function(slipway_torch_root_label label suite prefix)
  cmake_parse_arguments(PARSE_ARGV 3 arg "GPU_DRY;DOCKERFILE;HF_REFERENCE" "" "")
  set(run ${CMAKE_COMMAND} -E env TORCH2_SUITE=${suite}
      bash ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/torch2.sh ${SLIPWAY_TORCH2_CACHE} ${PROJECT_SOURCE_DIR})
  # Alone: a build compiles with both cores, a suite runs two of its tests at once.
  set(common LABELS ${label} SKIP_RETURN_CODE 77 RUN_SERIAL ON)

  add_test(NAME ${prefix}_root COMMAND ${run} root)
  set_tests_properties(${prefix}_root PROPERTIES ${common} TIMEOUT 1800 FIXTURES_SETUP ${prefix}_root)
  add_test(NAME ${prefix}_build COMMAND ${run} build)
  set_tests_properties(${prefix}_build PROPERTIES ${common} TIMEOUT 3600
                       FIXTURES_REQUIRED ${prefix}_root FIXTURES_SETUP ${prefix}_build)

  # The engine's test suites, by their labels; a test with two labels runs under the first one listed.
  set(suites contract tokenizer data model train dist engine plan)
  set(done "")
  foreach(suite_label IN LISTS suites)
    if(done)
      list(JOIN done "|" skip)
      add_test(NAME ${prefix}_${suite_label} COMMAND ${run} suite ${suite_label} "^(${skip})$")
    else()
      add_test(NAME ${prefix}_${suite_label} COMMAND ${run} suite ${suite_label})
    endif()
    set_tests_properties(${prefix}_${suite_label} PROPERTIES ${common} TIMEOUT 1800
                         FIXTURES_REQUIRED ${prefix}_build)
    list(APPEND done ${suite_label})
  endforeach()

  if(arg_HF_REFERENCE)
    # After the tokenizer suite, whose fixture (the reference tokenizers) it reads; it makes them itself
    # when that suite did not run.
    add_test(NAME ${prefix}_hf_reference COMMAND ${run} reference)
    set_tests_properties(${prefix}_hf_reference PROPERTIES ${common} TIMEOUT 1800
                         FIXTURES_REQUIRED ${prefix}_build DEPENDS ${prefix}_tokenizer)
  endif()
  if(arg_GPU_DRY)
    # tests/gpu/run.sh's configure (vendor folder, torch.utils.cmake_prefix_path) and its CPU-side parts, on
    # the build step's binaries.
    add_test(NAME ${prefix}_gpu_suite_dry COMMAND ${run} gpu)
    set_tests_properties(${prefix}_gpu_suite_dry PROPERTIES ${common} TIMEOUT 3600
                         FIXTURES_REQUIRED ${prefix}_build)
  endif()
  if(arg_DOCKERFILE AND SLIPWAY_BUILD_APP)
    # The rendered Dockerfile's engine stage (torch.utils.cmake_prefix_path of the root's python3-torch):
    # needs the app's CLI to render it.
    add_test(NAME ${prefix}_dockerfile_engine COMMAND ${run} dockerfile $<TARGET_FILE:slipway>)
    set_tests_properties(${prefix}_dockerfile_engine PROPERTIES ${common} TIMEOUT 3600
                         FIXTURES_REQUIRED ${prefix}_root)
  endif()
endfunction()

slipway_torch_root_label(torch2 trixie torch2 GPU_DRY DOCKERFILE)
slipway_torch_root_label(torch-latest forky torch_latest HF_REFERENCE)
