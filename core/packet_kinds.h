// Packet kinds a transport defines for itself (DESIGN.md "Packet room"). The core names its own
// kinds in core/packet.h; a transport reserves a block of kind numbers from the simulation's
// registry when it is built, and makes its codes from the block (data or control), so adding a
// transport never edits core/ and two transports in one run never share a code. Per simulation
// (no global table): the same transports built in the same order get the same codes.
#pragma once

#include <cstdint>  // kind numbers
#include <string>   // owner names
#include <vector>   // reserved blocks

#include "core/assert.h"
#include "core/packet.h"

namespace fabsim {

/// A range of kind numbers owned by one transport.
struct PacketKindBlock {
  uint8_t first = 0;  // first kind number of the block
  uint8_t count = 0;

  /// The code of the block's kind `i`; `data` = it carries payload (see is_data).
  PacketType kind(uint8_t i, bool data) const {
    FABSIM_ASSERT(i < count);
    return packet_kind(static_cast<uint8_t>(first + i), data);
  }
  bool owns(PacketType t) const {
    const uint8_t n = kind_number(t);
    return n >= first && n < first + count;
  }
  /// Position of `t` in the block (for a switch statement over the transport's kinds).
  uint8_t index(PacketType t) const {
    FABSIM_ASSERT(owns(t));
    return static_cast<uint8_t>(kind_number(t) - first);
  }
};

class PacketKindRegistry {
 public:
  /// Reserves `count` kind numbers for `owner`. A transport built twice in one simulation (one
  /// per host) gets the same block back. An empty block (count 0) when the space of 112
  /// transport numbers is exhausted.
  PacketKindBlock reserve(const std::string& owner, uint8_t count) {
    for (const Entry& e : entries_) {
      if (e.owner == owner) {
        FABSIM_ASSERT(e.block.count == count);
        return e.block;
      }
    }
    if (next_ + count > 128) return {};
    const PacketKindBlock b{next_, count};
    next_ = static_cast<uint8_t>(next_ + count);
    entries_.push_back({owner, b});
    return b;
  }
  /// Kind numbers still free.
  int free_numbers() const { return 128 - next_; }
  /// Who reserved the kind of `t` ("core" for the core's kinds, "" if nobody).
  std::string owner(PacketType t) const {
    if (kind_number(t) < kFirstTransportKind) return "core";
    for (const Entry& e : entries_) {
      if (e.block.owns(t)) return e.owner;
    }
    return "";
  }

 private:
  struct Entry {
    std::string owner;
    PacketKindBlock block;
  };
  std::vector<Entry> entries_;
  uint8_t next_ = kFirstTransportKind;
};

}  // namespace fabsim
