# Fails if a folder includes a header from a layer above it. The layers, bottom to top:
#   protocol -> config, tlm_interconnect -> workloads, models -> testbenches -> experiments -> apps
# (workloads and models sit side by side: they share only protocol/ and config/).
# Usage: cmake -DSOURCE_DIR=<repo> -P CheckLayering.cmake
set(forbidden_protocol "config/|tlm_interconnect/|workloads/|models/|testbenches/|experiments/|apps/")
set(forbidden_config "tlm_interconnect/|workloads/|models/|testbenches/|experiments/|apps/")
set(forbidden_tlm_interconnect "workloads/|models/|testbenches/|experiments/|apps/")
set(forbidden_workloads "models/|testbenches/|experiments/|apps/")
set(forbidden_models "workloads/|testbenches/|experiments/|apps/")
set(forbidden_testbenches "experiments/|apps/")
set(forbidden_experiments "apps/")
set(violations "")
foreach(layer protocol config tlm_interconnect workloads models testbenches experiments)
  file(GLOB_RECURSE files ${SOURCE_DIR}/${layer}/*.h ${SOURCE_DIR}/${layer}/*.cpp)
  foreach(file IN LISTS files)
    if(file MATCHES "/tests/")  # test suites may use every layer
      continue()
    endif()
    file(STRINGS ${file} includes REGEX "^#include \"(${forbidden_${layer}})")
    foreach(line IN LISTS includes)
      file(RELATIVE_PATH name ${SOURCE_DIR} ${file})
      string(APPEND violations "\n  ${name}: ${line}")
    endforeach()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "includes that point up the layers:${violations}")
endif()
