# Writes OUTPUT: a C++ table of {name, JSON text} for every CONFIG_DIR/*.json.
file(GLOB inputs ${CONFIG_DIR}/*.json)
list(SORT inputs)
set(body "")
foreach(file IN LISTS inputs)
  get_filename_component(name ${file} NAME_WE)
  file(READ ${file} text)
  string(APPEND body "    {\"${name}\", R\"t3preset(${text})t3preset\"},\n")
endforeach()
file(WRITE ${OUTPUT} "// Generated from configs/*.json by cmake/EmbedPresets.cmake.\n"
"#include <map>\n#include <string>\n\nnamespace t3 {\n"
"const std::map<std::string, std::string>& embedded_presets() {\n"
"  static const std::map<std::string, std::string> presets{\n${body}  };\n"
"  return presets;\n}\n}  // namespace t3\n")
