// ErrorLog: the one way blocks report the errors they answer (counted always, kept and reported
// up to a cap).
#include <catch2/catch.hpp>

#include <string>

#include <systemc>

#include "tlm_interconnect/error_log.h"

using namespace t3;

TEST_CASE("ErrorLog: the count keeps rising past the cap, the messages stop at it") {
  const char* type = "t3/test/error_log";
  sc_core::sc_report_handler::set_actions(type, sc_core::SC_DO_NOTHING);  // quiet, still counted
  ErrorLog log(type, 3);
  CHECK(log.count() == 0);
  CHECK(log.messages().empty());
  CHECK(log.kept() == 3);

  for (int i = 0; i < 10; ++i) log.add("error " + std::to_string(i));

  CHECK(log.count() == 10);
  REQUIRE(log.messages().size() == 3);
  CHECK(log.messages()[0] == "error 0");
  CHECK(log.messages()[2] == "error 2");
  // Only the kept messages were reported, each once, under the block's message type.
  CHECK(sc_core::sc_report_handler::get_count(type) == 3);
}

TEST_CASE("ErrorLog: a cap of zero only counts") {
  const char* type = "t3/test/error_log_zero";
  ErrorLog log(type, 0);
  log.add("never shown");
  log.add("nor this");
  CHECK(log.count() == 2);
  CHECK(log.messages().empty());
  CHECK(sc_core::sc_report_handler::get_count(type) == 0);
}
