// Builds a two-GPU group from the installed package, writes across the link, checks the data.
#include <cstring>
#include <iostream>

#include <config/config_io.h>
#include <harness/traffic_generator.h>
#include <models/system/tp_group.h>

int sc_main(int, char*[]) {
  t3::SystemConfig config = t3::load_system("t3-paper");
  t3::apply_override(config, "gpus=2");
  t3::apply_override(config, "sim.mode=functional");
  t3::TpGroup group("group", config);
  t3::TrafficGenerator generator("generator", t3::Origin{0, 0});
  generator.socket.bind(group.gpu(0).router.in);
  t3::TrafficPattern pattern;
  pattern.address = group.address_map().hbm_base(1);
  pattern.bytes = 256;
  pattern.extension.op = t3::Op::Write;
  pattern.fill = [](std::uint64_t, unsigned char* data, std::size_t n) { std::memset(data, 7, n); };
  generator.add(pattern);
  sc_core::sc_start();
  group.check_drained();
  unsigned char byte = 0;
  tlm::tlm_generic_payload payload;
  payload.set_command(tlm::TLM_READ_COMMAND);
  payload.set_address(pattern.address + 255);
  payload.set_data_ptr(&byte);
  payload.set_data_length(1);
  payload.set_streaming_width(1);
  group.gpu(1).router.in.get_base_export()->transport_dbg(payload);
  if (byte != 7 || !generator.results()[0].errors.empty()) {
    std::cerr << "consumer: remote write did not arrive\n";
    return 1;
  }
  std::cout << "consumer: ok\n";
  return 0;
}
