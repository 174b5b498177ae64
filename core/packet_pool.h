// Per-simulation packet pool (DESIGN.md "The engine"). Packets live in fixed chunks so their
// addresses are stable; free packets are kept on a stack. A packet has one owner at a time and
// whoever consumes it returns it with release(). `live()` lets tests check that nothing leaked.
// Extension blocks (core/packet.h) come from a second pool of the same shape; a packet's block
// goes back with the packet, so owners never free blocks themselves.
#pragma once

#include <cstdint>  // uint64_t
#include <cstring>  // memcpy (free list)
#include <memory>   // unique_ptr for chunks
#include <vector>   // chunk lists, free blocks

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
    if (free_ == nullptr) grow();
    Packet* p = free_;
    free_ = next_free(*p);
    *p = Packet{};
    p->uid = next_uid_++;
    ++live_;
    return p;
  }
  void release(Packet* p) {
    FABSIM_ASSERT(p != nullptr && live_ > 0);
    FABSIM_ASSERT(p->ledger != kPacketFree);  // released twice
    if (p->block != 0) [[unlikely]]
      release_block(p);
    p->ledger = kPacketFree;
    set_next_free(*p, free_);
    free_ = p;
    --live_;
  }
  /// A copy of `p` with a fresh uid and, if `p` has an extension block, a copy of the block.
  Packet* clone(const Packet& p) {
    Packet* c = acquire();
    const uint64_t uid = c->uid;
    *c = p;
    c->uid = uid;
    c->block = 0;
    c->ledger = 0;  // a new packet: not injected yet
    if (p.block != 0) attach_block(*c) = block(p);
    return c;
  }
  /// Packets acquired and not yet released.
  uint64_t live() const { return live_; }
  /// Calls `fn(const Packet&)` for every packet acquired and not yet released (end-of-run
  /// accounting; visits every slot, so not for the hot path).
  template <typename Fn> void for_each_live(Fn&& fn) const {
    for (const auto& chunk : chunks_) {
      for (size_t i = 0; i < kChunk; ++i) {
        if (chunk[i].ledger != kPacketFree) fn(chunk[i]);
      }
    }
  }
  /// Packets ever allocated (the pool's high-water mark; release_storage() keeps it).
  uint64_t capacity() const { return capacity_; }
  /// Packet slots allocated now (capacity() until release_storage(), then 0 until a packet is
  /// acquired again).
  uint64_t allocated() const { return chunks_.size() * kChunk; }
  /// Frees every chunk of packets and blocks if none is live (true), else does nothing
  /// (false). For the end of a run: the report is built after it, in the memory the packets
  /// held, so it does not raise the process's peak. The pool stays usable.
  bool release_storage() {
    if (live_ != 0 || live_blocks_ != 0) return false;
    chunks_.clear();
    chunks_.shrink_to_fit();
    free_ = nullptr;
    block_chunks_.clear();
    block_chunks_.shrink_to_fit();
    free_blocks_.clear();
    free_blocks_.shrink_to_fit();
    return true;
  }

  /// Gives `p` a zeroed extension block (it must have none) and returns it.
  ExtBlock& attach_block(Packet& p) {
    FABSIM_ASSERT(p.block == 0);
    if (free_blocks_.empty()) grow_blocks();
    p.block = free_blocks_.back();
    free_blocks_.pop_back();
    ++live_blocks_;
    ExtBlock& b = block(p);
    b = ExtBlock{};
    return b;
  }
  /// The extension block of `p` (it must have one).
  ExtBlock& block(const Packet& p) {
    FABSIM_ASSERT(p.block != 0 && p.block <= block_chunks_.size() * kBlockChunk);
    const uint32_t i = p.block - 1;
    return block_chunks_[i / kBlockChunk][i % kBlockChunk];
  }
  const ExtBlock& block(const Packet& p) const {
    FABSIM_ASSERT(p.block != 0 && p.block <= block_chunks_.size() * kBlockChunk);
    const uint32_t i = p.block - 1;
    return block_chunks_[i / kBlockChunk][i % kBlockChunk];
  }
  /// Blocks attached to packets not yet released.
  /// Prefetch hint: the fabric half of p's extension block (where switches stamp INT records
  /// and the receiver and sender read them), when p has a block. Always inlined: as a call,
  /// GCC 12 finds it reads memory and writes none (a prefetch is no side effect to it), so it
  /// deletes every call whose result is unused, that is all of them (docs/PERFORMANCE.md).
  [[gnu::always_inline]] void prefetch_fabric(const Packet& p) const {
    if (p.block == 0) return;
    const unsigned char* fabric = block(p).bytes + ExtBlock::kFabricOffset;
    __builtin_prefetch(fabric, 1);
    __builtin_prefetch(fabric + 64, 1);
  }
  uint64_t live_blocks() const { return live_blocks_; }
  /// Blocks ever allocated (0 in a run whose protocols need none).
  uint64_t block_capacity() const { return block_capacity_; }

 private:
  static constexpr size_t kChunk = 4096;
  static constexpr uint32_t kBlockChunk = 1024;  // 256 KiB of blocks per chunk
  void grow() {
    chunks_.push_back(std::make_unique<Packet[]>(kChunk));
    if (chunks_.size() * kChunk > capacity_) capacity_ = chunks_.size() * kChunk;
    Packet* base = chunks_.back().get();
    for (size_t i = kChunk; i-- > 0;) {
      base[i].ledger = kPacketFree;
      set_next_free(base[i], free_);
      free_ = base + i;
    }
  }
  // A free packet's uid field holds the next free packet: the free list costs no memory.
  static Packet* next_free(const Packet& p) {
    Packet* next = nullptr;
    std::memcpy(&next, &p.uid, sizeof(next));
    return next;
  }
  static void set_next_free(Packet& p, Packet* next) { std::memcpy(&p.uid, &next, sizeof(next)); }
  static_assert(sizeof(Packet::uid) >= sizeof(Packet*));
  void grow_blocks() {
    const auto first = static_cast<uint32_t>(block_chunks_.size() * kBlockChunk);
    block_chunks_.push_back(std::make_unique<ExtBlock[]>(kBlockChunk));
    if (block_chunks_.size() * kBlockChunk > block_capacity_)
      block_capacity_ = block_chunks_.size() * kBlockChunk;
    free_blocks_.reserve(free_blocks_.size() + kBlockChunk);
    for (uint32_t i = kBlockChunk; i-- > 0;) free_blocks_.push_back(first + i + 1);  // ids from 1
  }
  void release_block(Packet* p) {
    FABSIM_ASSERT(live_blocks_ > 0);
    free_blocks_.push_back(p->block);
    p->block = 0;
    --live_blocks_;
  }
  std::vector<std::unique_ptr<Packet[]>> chunks_;
  Packet* free_ = nullptr;  // free list through the packets themselves
  uint64_t live_ = 0;
  uint64_t capacity_ = 0;  // most packets ever allocated at once
  uint64_t next_uid_ = 0;
  std::vector<std::unique_ptr<ExtBlock[]>> block_chunks_;
  uint64_t block_capacity_ = 0;  // most blocks ever allocated at once
  std::vector<ExtBlockId> free_blocks_;
  uint64_t live_blocks_ = 0;
};

}  // namespace fabsim
