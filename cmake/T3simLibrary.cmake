# t3sim_library(<name> SOURCES ... [DEPS ...]) builds t3sim_<name>, aliased and exported as
# t3sim::<name>, with its headers installed under include/t3sim/<folder>/.
function(t3sim_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  set(target t3sim_${name})
  add_library(${target} STATIC ${ARG_SOURCES})
  add_library(t3sim::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_link_libraries(${target} PUBLIC ${ARG_DEPS})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                              $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/t3sim>)
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  file(GLOB headers ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
  install(FILES ${headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/t3sim/${folder})
  install(TARGETS ${target} EXPORT t3simTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

# t3sim_embed_json(<function> <dir> <what> <cpp_var> <inputs_var>) generates
# ${CMAKE_CURRENT_BINARY_DIR}/<function>.cpp, whose `<function>()` returns every <dir>/*.json by
# name (cmake/EmbedJson.cmake), rebuilt when one of them changes. Sets <cpp_var> to the generated
# source and <inputs_var> to the JSON files.
function(t3sim_embed_json function dir what cpp_var inputs_var)
  file(GLOB inputs CONFIGURE_DEPENDS ${dir}/*.json)
  list(SORT inputs)
  set(cpp ${CMAKE_CURRENT_BINARY_DIR}/${function}.cpp)
  add_custom_command(
    OUTPUT ${cpp}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${cpp} -DINPUT_DIR=${dir} -DFUNCTION=${function} -P
            ${PROJECT_SOURCE_DIR}/cmake/EmbedJson.cmake
    DEPENDS ${inputs} ${PROJECT_SOURCE_DIR}/cmake/EmbedJson.cmake
    COMMENT "Embedding ${what}")
  set(${cpp_var} ${cpp} PARENT_SCOPE)
  set(${inputs_var} ${inputs} PARENT_SCOPE)
endfunction()
