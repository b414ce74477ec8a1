#include "models/hbm/transaction.h"

#include <algorithm>
#include <new>

namespace t3 {

void HbmTransaction::open(const tlm::tlm_generic_payload& payload, const T3Extension& extension,
                          sc_core::sc_time at) {
  data = payload.get_data_ptr();
  op = extension.op;
  traffic_class = extension.traffic_class;
  urgent = extension.urgent;
  element = extension.element;
  tag = extension.tag;
  origin = extension.origin;
  unit_kind = extension.unit_kind;
  arrival = at;
  finish = 0;
}

RequestSplitter::RequestSplitter(const HbmConfig& config)
    : granule_(static_cast<std::uint64_t>(config.interleave_bytes)),
      channels_(static_cast<std::uint64_t>(config.channels)),
      pseudo_channels_(static_cast<int>(config.bank.pseudo_channels)) {
  if (config.model == HbmModel::Bank) map_.emplace(config);
}

void RequestSplitter::split(HbmTransaction& transaction, std::uint64_t offset,
                            std::uint64_t length) const {
  auto& subs = transaction.subs;
  subs.clear();
  for (std::uint64_t done = 0; done < length;) {
    const std::uint64_t at = offset + done;
    const auto chunk =
        static_cast<std::uint32_t>(std::min(length - done, granule_ - at % granule_));
    if (map_) {
      // The location is decoded straight into the sub-request (placement new of the returned
      // value: no copy): a copy read the fields locate() had just stored one by one with wider
      // loads, which the CPU cannot forward from the stores and waits for.
      SubRequest& sub = subs.emplace_back();
      const DramLocation& where = *::new (&sub.where) DramLocation(map_->locate(at, chunk));
      sub.offset = at;
      sub.bytes = chunk;
      sub.data_offset = static_cast<std::uint32_t>(done);
      sub.channel = where.channel;
      sub.queue = where.channel * pseudo_channels_ + where.pseudo_channel;
    } else if (const int channel = channel_of(at);
               !subs.empty() && subs.back().channel == channel) {
      subs.back().bytes += chunk;  // a run on one channel
    } else {
      subs.push_back({at, chunk, static_cast<std::uint32_t>(done), channel, channel, {}});
    }
    done += chunk;
  }
  transaction.unserved = subs.size();
}

}  // namespace t3
