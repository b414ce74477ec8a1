# Fails if a folder includes a header from a layer above it. The layers, bottom to top:
#   protocol -> config, tlm_interconnect -> workloads, models -> harness -> testbenches,
#   experiments -> apps
# (workloads and models sit side by side: they share only protocol/ and config/; workloads/
# includes its scenarios/; testbenches and experiments sit side by side above harness/).
# bench/ and examples/ may use everything up to experiments/, never apps/ or testbenches/.
# Usage: cmake -DSOURCE_DIR=<repo> -P CheckLayering.cmake
set(above_models "harness/|testbenches/|experiments/|apps/")
set(forbidden_protocol "config/|tlm_interconnect/|workloads/|models/|${above_models}")
set(forbidden_config "tlm_interconnect/|workloads/|models/|${above_models}")
set(forbidden_tlm_interconnect "workloads/|models/|${above_models}")
set(forbidden_workloads "models/|${above_models}")
set(forbidden_models "workloads/|${above_models}")
set(forbidden_harness "testbenches/|experiments/|apps/")
set(forbidden_testbenches "experiments/|apps/")
set(forbidden_experiments "testbenches/|apps/")
set(forbidden_apps "testbenches/")
set(forbidden_bench "testbenches/|apps/")
set(forbidden_examples "testbenches/|apps/")
# Appends "<file>: <include><note>" to `violations` for every include in `layer`'s sources that
# matches `pattern`; its test suites count only when `with_tests` (they may use every layer).
function(find_includes layer pattern note with_tests)
  file(GLOB_RECURSE files ${SOURCE_DIR}/${layer}/*.h ${SOURCE_DIR}/${layer}/*.cpp)
  foreach(file IN LISTS files)
    if(NOT with_tests AND file MATCHES "/tests/")
      continue()
    endif()
    file(STRINGS ${file} includes REGEX "${pattern}")
    foreach(line IN LISTS includes)
      file(RELATIVE_PATH name ${SOURCE_DIR} ${file})
      string(APPEND violations "\n  ${name}: ${line}${note}")
    endforeach()
  endforeach()
  set(violations "${violations}" PARENT_SCOPE)
endfunction()

set(violations "")
foreach(layer protocol config tlm_interconnect workloads models harness testbenches experiments
              apps bench examples)
  find_includes(${layer} "^#include [\"<](${forbidden_${layer}})" "" FALSE)
endforeach()
# workloads/scenarios/ holds the scenario planners: part of workloads/, included by no other folder.
foreach(layer protocol config tlm_interconnect models harness testbenches experiments apps bench
              examples)
  find_includes(${layer} "^#include [\"<]workloads/scenarios/" " (internal to workloads/)" TRUE)
endforeach()
if(violations)
  message(FATAL_ERROR "includes that point up the layers:${violations}")
endif()
