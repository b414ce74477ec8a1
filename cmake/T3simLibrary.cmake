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
