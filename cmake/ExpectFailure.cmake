# Runs COMMAND (a ;-list); passes only if it exits 2 (bad input: usage or configuration) and its
# stderr is one line matching EXPECT. One line, because the cause must not drown in usage text.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE status ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT status EQUAL 2)
  message(FATAL_ERROR "expected exit 2 (bad input), got '${status}' from: ${COMMAND}\n${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr of ${COMMAND} does not match '${EXPECT}':\n${err}")
endif()
string(STRIP "${err}" stripped)
if(stripped MATCHES "\n")
  message(FATAL_ERROR "stderr of ${COMMAND} is more than one line:\n${err}")
endif()
