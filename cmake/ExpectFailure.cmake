# Runs COMMAND (a ;-list); passes only if it exits non-zero and its stderr matches EXPECT.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE status ERROR_VARIABLE err OUTPUT_QUIET)
if(status EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit from: ${COMMAND}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr of ${COMMAND} does not match '${EXPECT}':\n${err}")
endif()
