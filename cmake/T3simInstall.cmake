include(CMakePackageConfigHelpers)

install(EXPORT t3simTargets NAMESPACE t3sim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/t3sim)
configure_package_config_file(cmake/t3simConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/t3simConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/t3sim)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/t3simConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/t3simConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/t3simConfigVersion.cmake
              cmake/T3simDependencies.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/t3sim)
install(DIRECTORY configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/t3sim/configs)
