// The table that picks the class running each collective algorithm on the SMs.
#include <map>
#include <stdexcept>
#include <string>

#include "models/sm/collectives/channel.h"

namespace t3 {

const ChannelAlgorithm& channel_algorithm(CollectiveAlgorithm algorithm) {
  static const RingAlgorithm ring;
  static const DirectAlgorithm direct;
  static const AddAlgorithm add;
  static const NvlsAlgorithm nvls;
  static const DirectNmcAlgorithm direct_nmc;
  // One row per CollectiveAlgorithm (protocol/collective_descriptor.h).
  static const std::map<CollectiveAlgorithm, const ChannelAlgorithm*> table = {
      {CollectiveAlgorithm::Ring, &ring},
      {CollectiveAlgorithm::Direct, &direct},
      {CollectiveAlgorithm::Add, &add},
      {CollectiveAlgorithm::Nvls, &nvls},
      {CollectiveAlgorithm::DirectNmc, &direct_nmc},
  };
  const auto it = table.find(algorithm);
  if (it == table.end()) {
    throw std::logic_error(
        std::string("the SMs have no implementation of the collective algorithm ") +
        to_string(algorithm));
  }
  return *it->second;
}

}  // namespace t3
