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

# The PyPI reference checks, NAME=SCRIPT (SCRIPT relative to the source tree; see torch2.sh pyref).
set(SLIPWAY_PYREF_CHECKS
  peft=tests/reference/peft_check.py
  lm_eval=tests/reference/lm_eval_check.py
  bnb=tests/quant/bnb_check.py
)

# One label on one Debian suite's root: tests PREFIX_root, PREFIX_build (one engine build, reused by every
# later step), PREFIX_<suite label> per engine suite, and the optional steps named by the flags:
# COMPILE_CHECK (PREFIX_compile: the translation units with a torch-version branch, syntax-only, without a
# build), GPU_DRY (tests/gpu/run.sh's build and CPU-side parts), DOCKERFILE (a rendered Dockerfile's engine
# stage), HF_REFERENCE (the engine against HF transformers on CPU), and PYREF_CHECKS, "NAME=SCRIPT" entries:
# test PREFIX_NAME (labels `reference` and LABEL) runs SCRIPT against the pinned PyPI references (torch2.sh
# pyref). SUITES names the engine suites that run under LABEL; the others, and the GPU_DRY and DOCKERFILE
# steps, run under LABEL-full, which packaging/test.sh leaves out unless --all. TARGETS limits PREFIX_build to
# the targets those steps need; PREFIX_build_full (LABEL-full) then builds the rest for the -full suites.
# PREFIX_build itself is under LABEL-full when nothing under LABEL needs it.
# Each runs alone: the roots share the machine's cores and the ccache.
function(slipway_torch_root_label label suite prefix)
  cmake_parse_arguments(PARSE_ARGV 3 arg "COMPILE_CHECK;GPU_DRY;DOCKERFILE;HF_REFERENCE" ""
                        "SUITES;TARGETS;PYREF_CHECKS")
  set(run ${CMAKE_COMMAND} -E env TORCH2_SUITE=${suite}
      bash ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/torch2.sh ${SLIPWAY_TORCH2_CACHE} ${PROJECT_SOURCE_DIR})
  # Alone: a build compiles with both cores, a suite runs two of its tests at once.
  set(common SKIP_RETURN_CODE 77 RUN_SERIAL ON)

  add_test(NAME ${prefix}_root COMMAND ${run} root)
  set_tests_properties(${prefix}_root PROPERTIES LABELS ${label} ${common} TIMEOUT 1800
                       FIXTURES_SETUP ${prefix}_root)
  if(arg_COMPILE_CHECK)
    add_test(NAME ${prefix}_compile COMMAND ${run} compile)
    set_tests_properties(${prefix}_compile PROPERTIES LABELS ${label} ${common} TIMEOUT 1800
                         FIXTURES_REQUIRED ${prefix}_root)
  endif()
  if(arg_SUITES OR arg_PYREF_CHECKS OR arg_HF_REFERENCE)
    set(build_label ${label})
  else()
    set(build_label ${label}-full)
  endif()
  add_test(NAME ${prefix}_build COMMAND ${run} build ${arg_TARGETS})
  set_tests_properties(${prefix}_build PROPERTIES LABELS ${build_label} ${common} TIMEOUT 3600
                       FIXTURES_REQUIRED ${prefix}_root FIXTURES_SETUP ${prefix}_build)
  set(full_build ${prefix}_build)
  if(arg_TARGETS)
    add_test(NAME ${prefix}_build_full COMMAND ${run} build)
    set_tests_properties(${prefix}_build_full PROPERTIES LABELS ${label}-full ${common} TIMEOUT 3600
                         FIXTURES_REQUIRED ${prefix}_build FIXTURES_SETUP ${prefix}_build_full)
    set(full_build ${prefix}_build_full)
  endif()

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
    if(suite_label IN_LIST arg_SUITES)
      set_tests_properties(${prefix}_${suite_label} PROPERTIES LABELS ${label} ${common} TIMEOUT 1800
                           FIXTURES_REQUIRED ${prefix}_build)
    else()
      set_tests_properties(${prefix}_${suite_label} PROPERTIES LABELS ${label}-full ${common} TIMEOUT 1800
                           FIXTURES_REQUIRED ${full_build})
    endif()
    list(APPEND done ${suite_label})
  endforeach()

  if(arg_HF_REFERENCE)
    # Reads the tokenizer suite's fixture (the reference tokenizers) when that suite ran before it, and
    # makes them itself otherwise.
    add_test(NAME ${prefix}_hf_reference COMMAND ${run} reference)
    set_tests_properties(${prefix}_hf_reference PROPERTIES LABELS ${label} ${common} TIMEOUT 1800
                         FIXTURES_REQUIRED ${prefix}_build DEPENDS ${prefix}_tokenizer)
  endif()
  foreach(check IN LISTS arg_PYREF_CHECKS)
    string(REPLACE "=" ";" check ${check})
    list(GET check 0 name)
    list(GET check 1 script)
    add_test(NAME ${prefix}_${name} COMMAND ${run} pyref ${script})
    set_tests_properties(${prefix}_${name} PROPERTIES LABELS "reference;${label}" ${common} TIMEOUT 1800
                         FIXTURES_REQUIRED ${prefix}_build)
  endforeach()
  if(arg_GPU_DRY)
    # tests/gpu/run.sh's configure (vendor folder, torch.utils.cmake_prefix_path) and its CPU-side parts, on
    # the build step's binaries.
    add_test(NAME ${prefix}_gpu_suite_dry COMMAND ${run} gpu)
    set_tests_properties(${prefix}_gpu_suite_dry PROPERTIES LABELS ${label}-full ${common} TIMEOUT 3600
                         FIXTURES_REQUIRED ${prefix}_build)
  endif()
  if(arg_DOCKERFILE AND SLIPWAY_BUILD_APP)
    # The rendered Dockerfile's engine stage (torch.utils.cmake_prefix_path of the root's python3-torch), a
    # second build of the engine with the image's own flags: needs the app's CLI to render it.
    add_test(NAME ${prefix}_dockerfile_engine COMMAND ${run} dockerfile $<TARGET_FILE:slipway>)
    set_tests_properties(${prefix}_dockerfile_engine PROPERTIES LABELS ${label}-full ${common} TIMEOUT 3600
                         FIXTURES_REQUIRED ${prefix}_root)
  endif()
endfunction()

# trixie's 2.6 stands between the host's 1.13 and forky's 2.14. What differs there is c10d's API (the Reducer's
# constructor, process groups) and a few tensor calls, each behind a TORCH_VERSION_ branch: CI compiles just
# those translation units, syntax-only (a minute, where the build and suites took twenty on a fresh machine).
# The build, link, the dist suite on 2.6, the GPU suite's configure against the vendor folder and the rest
# run under torch2-full.
slipway_torch_root_label(torch2 trixie torch2 COMPILE_CHECK GPU_DRY DOCKERFILE)
# The PyPI references' checks (tests/reference/requirements.txt) run in forky's root: its torch 2.14 and
# transformers are what they are built for, and nothing as large as a CUDA torch is downloaded. Under
# torch-latest run the suites whose results depend on torch (models against HF, training, ranks, the CLI);
# contract, tokenizer, data and plan barely touch it, repeat the host's runs, and go under torch-latest-full.
slipway_torch_root_label(torch-latest forky torch_latest HF_REFERENCE
  SUITES model train dist engine
  TARGETS slipway-engine engine_cli_tests quant_tests generate_tests gguf_writer_tests model_family_tests
          packed_batch_tests qlora_tests checkpoint_tests train_tests communicator_group_tests dist_failure_tests
          dist_tests dist_train_tests
  PYREF_CHECKS ${SLIPWAY_PYREF_CHECKS})
