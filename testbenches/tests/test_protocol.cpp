// Payload protocol: the t3 extension's helpers and the pooled memory manager.
#include <catch2/catch.hpp>

#include "tlm_interconnect/payload.h"

using namespace t3;

TEST_CASE("set() attaches the extension and the TLM command that matches the op") {
  tlm::tlm_generic_payload payload;
  T3Extension extension;
  extension.op = Op::Update;
  extension.element = ElementType::Bf16;
  extension.traffic_class = TrafficClass::Communication;
  extension.origin = {3, 7};
  extension.tag = 42;
  extension.cache_hint = CacheHint::Uncached;
  T3Extension::set(payload, extension);
  CHECK(payload.get_command() == tlm::TLM_WRITE_COMMAND);
  const T3Extension read_back = T3Extension::get(payload);
  CHECK(read_back.op == Op::Update);
  CHECK(read_back.element == ElementType::Bf16);
  CHECK(read_back.traffic_class == TrafficClass::Communication);
  CHECK(read_back.origin.gpu == 3);
  CHECK(read_back.origin.unit == 7);
  CHECK(read_back.tag == 42u);
  CHECK(read_back.cache_hint == CacheHint::Uncached);

  extension.op = Op::Read;
  T3Extension::set(payload, extension);  // overwrites in place, command follows
  CHECK(payload.get_command() == tlm::TLM_READ_COMMAND);
  CHECK(T3Extension::get(payload).op == Op::Read);
}

TEST_CASE("a payload without the extension reads as plain compute traffic") {
  tlm::tlm_generic_payload payload;
  payload.set_command(tlm::TLM_WRITE_COMMAND);
  CHECK(T3Extension::get(payload).op == Op::Write);
  CHECK(T3Extension::get(payload).traffic_class == TrafficClass::Compute);
  CHECK(T3Extension::get(payload).tag == kNoTag);
  payload.set_command(tlm::TLM_READ_COMMAND);
  CHECK(T3Extension::get(payload).op == Op::Read);
  CHECK(T3Extension::check(payload).empty());
}

TEST_CASE("check() names a command that disagrees with the op") {
  tlm::tlm_generic_payload payload;
  unsigned char data[6] = {};
  payload.set_data_ptr(data);
  payload.set_data_length(6);
  T3Extension extension;
  extension.op = Op::Update;
  extension.element = ElementType::Fp32;
  T3Extension::set(payload, extension);
  CHECK_THAT(T3Extension::check(payload), Catch::Contains("not a whole number of fp32"));
  payload.set_data_length(4);
  CHECK(T3Extension::check(payload).empty());
  payload.set_command(tlm::TLM_READ_COMMAND);
  CHECK_THAT(T3Extension::check(payload), Catch::Contains("'update' carried by a read command"));
  payload.set_command(tlm::TLM_IGNORE_COMMAND);
  CHECK_FALSE(T3Extension::check(payload).empty());
}

TEST_CASE("clone and copy_from carry every field") {
  T3Extension extension;
  extension.op = Op::Write;
  extension.tag = 9;
  extension.origin = {1, 2};
  tlm::tlm_extension_base* copy = extension.clone();
  CHECK(static_cast<T3Extension*>(copy)->tag == 9u);
  copy->free();
  T3Extension other;
  other.copy_from(extension);
  CHECK(other.origin.unit == 2);
  CHECK(other.op == Op::Write);
}

TEST_CASE("the pool reuses released payloads and keeps their extension") {
  PayloadPool pool;
  T3Extension extension;
  extension.op = Op::Write;
  extension.tag = 5;
  auto* first = make_payload(pool, 0x1000, 128, extension);
  CHECK(first->get_ref_count() == 1);
  CHECK(first->has_mm());
  CHECK(first->get_address() == 0x1000);
  CHECK(first->get_data_length() == 128);
  CHECK(first->get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE);
  CHECK(T3Extension::get(*first).tag == 5u);
  auto* second = pool.allocate(64);
  CHECK(second != first);
  CHECK(pool.in_use() == 2);
  first->release();
  CHECK(pool.in_use() == 1);
  auto* third = pool.allocate(4096);  // grows the reused buffer
  CHECK(third == first);
  CHECK(third->get_data_length() == 4096);
  third->get_data_ptr()[4095] = 1;  // the buffer really holds 4096 bytes
  CHECK(pool.allocated() == 2);
  second->release();
  third->release();
  CHECK(pool.in_use() == 0);
}
