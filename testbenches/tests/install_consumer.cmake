# Installs the built tree into a scratch prefix, then configures, builds and runs a consumer
# project that finds the package with find_package(t3sim) and elaborates a TpGroup, and does the
# same with the documented example examples/virtual_platform (its own CPU model driving the
# installed memory controller, tracker and DMA engine).
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGV}\n${out}\n${err}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/testbenches/tests/install_consumer -B ${WORK_DIR}/build
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2)
run(${CMAKE_COMMAND} -E env SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 ${WORK_DIR}/build/consumer)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/virtual_platform -B ${WORK_DIR}/virtual_platform
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/virtual_platform -j2)
run(${CMAKE_COMMAND} -E env SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 ${WORK_DIR}/virtual_platform/virtual_platform)
