# Every dependency comes from a Debian package; nothing is downloaded at build time.
# SystemC ships only pkg-config files, so it is wrapped here as SystemC::systemc.
# This file is also installed and included by t3simConfig.cmake, so consumers find the same way.
find_package(PkgConfig REQUIRED)
if(NOT TARGET SystemC::systemc)
  pkg_check_modules(T3SIM_SYSTEMC REQUIRED IMPORTED_TARGET GLOBAL systemc>=2.3.4)
  add_library(SystemC::systemc INTERFACE IMPORTED GLOBAL)
  target_link_libraries(SystemC::systemc INTERFACE PkgConfig::T3SIM_SYSTEMC)
  target_compile_features(SystemC::systemc INTERFACE cxx_std_17)
endif()
find_package(nlohmann_json 3.10 REQUIRED)
