#include "models/hbm/backing_store.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "tlm_interconnect/element.h"

namespace t3 {

BackingStore::Page& BackingStore::page(std::uint64_t index) {
  auto& slot = pages_[index];
  if (!slot) {
    slot = std::make_unique<Page>();
    slot->fill(0);
  }
  return *slot;
}

void BackingStore::read(std::uint64_t offset, unsigned char* data, std::size_t bytes) const {
  while (bytes > 0) {
    const std::uint64_t within = offset % kPageBytes;
    const std::size_t chunk =
        static_cast<std::size_t>(std::min<std::uint64_t>(bytes, kPageBytes - within));
    const auto it = pages_.find(offset / kPageBytes);
    if (it == pages_.end()) {
      std::memset(data, 0, chunk);  // untouched memory reads as zero and stays unallocated
    } else {
      std::memcpy(data, it->second->data() + within, chunk);
    }
    offset += chunk;
    data += chunk;
    bytes -= chunk;
  }
}

void BackingStore::write(std::uint64_t offset, const unsigned char* data, std::size_t bytes) {
  while (bytes > 0) {
    const std::uint64_t within = offset % kPageBytes;
    const std::size_t chunk =
        static_cast<std::size_t>(std::min<std::uint64_t>(bytes, kPageBytes - within));
    std::memcpy(page(offset / kPageBytes).data() + within, data, chunk);
    offset += chunk;
    data += chunk;
    bytes -= chunk;
  }
}

void BackingStore::update_add(std::uint64_t offset, const unsigned char* operand, std::size_t bytes,
                              ElementType type) {
  const std::uint64_t within = offset % kPageBytes;
  if (within + bytes <= kPageBytes) {
    add_elements(page(offset / kPageBytes).data() + within, operand, bytes, type);
    return;
  }
  // Spans pages (an element may even straddle a page boundary): add in a scratch copy.
  thread_local std::vector<unsigned char> scratch;
  scratch.resize(bytes);
  read(offset, scratch.data(), bytes);
  add_elements(scratch.data(), operand, bytes, type);
  write(offset, scratch.data(), bytes);
}

void BackingStore::apply(Op op, std::uint64_t offset, unsigned char* data, std::size_t bytes,
                         ElementType type) {
  switch (op) {
    case Op::Read:
      read(offset, data, bytes);
      break;
    case Op::Write:
      write(offset, data, bytes);
      break;
    case Op::Update:
      update_add(offset, data, bytes, type);
      break;
  }
}

}  // namespace t3
