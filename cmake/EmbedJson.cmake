# Writes OUTPUT: a C++ function `const std::map<std::string, std::string>& FUNCTION()` in namespace
# t3 returning {file name without extension, file text} for every INPUT_DIR/*.json.
# Run with cmake -DOUTPUT=... -DINPUT_DIR=... -DFUNCTION=... -P EmbedJson.cmake.
foreach(var OUTPUT INPUT_DIR FUNCTION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "EmbedJson.cmake: -D${var}=... is required")
  endif()
endforeach()
file(GLOB inputs ${INPUT_DIR}/*.json)
list(SORT inputs)
set(body "")
foreach(file IN LISTS inputs)
  get_filename_component(name ${file} NAME_WE)
  file(READ ${file} text)
  string(FIND "${text}" ")t3json\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the raw-string delimiter )t3json\"")
  endif()
  string(APPEND body "      {\"${name}\", R\"t3json(${text})t3json\"},\n")
endforeach()
string(CONCAT content "// Generated from ${INPUT_DIR}/*.json by cmake/EmbedJson.cmake. Do not edit.\n"
"#include <map>\n#include <string>\n\nnamespace t3 {\n"
"const std::map<std::string, std::string>& ${FUNCTION}() {\n"
"  static const std::map<std::string, std::string> files{\n${body}  };\n"
"  return files;\n}\n}  // namespace t3\n")
file(WRITE ${OUTPUT} "${content}")
