// Per-simulation packet pool (DESIGN.md "The engine"). Packets live in fixed chunks so their
// addresses are stable; free packets are kept on a stack. A packet has one owner at a time and
// whoever consumes it returns it with release(). `live()` lets tests check that nothing leaked.
#pragma once

#include <cstdint>  // uint64_t
#include <memory>   // unique_ptr for chunks
#include <vector>   // chunk list, free stack

#include "core/assert.h"
#include "core/packet.h"

namespace fabsim {

class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  /// A packet with every field at its default and a fresh uid.
  Packet* acquire() {
    if (free_.empty()) grow();
    Packet* p = free_.back();
    free_.pop_back();
    *p = Packet{};
    p->uid = next_uid_++;
    ++live_;
    return p;
  }
  void release(Packet* p) {
    FABSIM_ASSERT(p != nullptr && live_ > 0);
    free_.push_back(p);
    --live_;
  }
  /// Packets acquired and not yet released.
  uint64_t live() const { return live_; }
  /// Packets ever allocated (the pool's high-water mark).
  uint64_t capacity() const { return chunks_.size() * kChunk; }

 private:
  static constexpr size_t kChunk = 4096;
  void grow() {
    chunks_.push_back(std::make_unique<Packet[]>(kChunk));
    Packet* base = chunks_.back().get();
    free_.reserve(free_.size() + kChunk);
    for (size_t i = kChunk; i-- > 0;) free_.push_back(base + i);
  }
  std::vector<std::unique_ptr<Packet[]>> chunks_;
  std::vector<Packet*> free_;
  uint64_t live_ = 0;
  uint64_t next_uid_ = 0;
};

}  // namespace fabsim
