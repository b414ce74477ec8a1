// Catch2 runner inside sc_main. Any SystemC warning or error throws, so it fails the test case.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <systemc>

int sc_main(int argc, char* argv[]) {
  using namespace sc_core;
  sc_report_handler::set_actions(SC_WARNING, SC_DISPLAY | SC_THROW);
  sc_report_handler::set_actions(SC_ERROR, SC_DISPLAY | SC_THROW);
  return Catch::Session().run(argc, argv);
}
