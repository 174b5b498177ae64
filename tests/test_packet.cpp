// Packet room (issue 13 item 3): the packet's size and layout, open packet kinds and their
// registry, and extension blocks from the pool (attached only on demand, returned with the
// packet, copied by clone).
#include <gtest/gtest.h>

#include "conserved.h"
#include "helpers.h"

#include <cstddef>  // offsetof
#include <vector>   // held packets

#include "core/packet.h"
#include "core/packet_kinds.h"
#include "core/simulation.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {

TEST(PacketLayout, SizeAndAreas) {
  EXPECT_EQ(sizeof(Packet), 96U);
  EXPECT_EQ(offsetof(Packet, ext), 64U);
  EXPECT_EQ(sizeof(ExtBlock), 256U);
  // A 256-bit SACK bitmap fits the transport half; 5 INT hops fit the fabric half.
  EXPECT_GE(ExtBlock::kTransportBytes, 32U);
  EXPECT_LE(int_hop_offset(kMaxIntHops), ExtBlock::kBytes);
  EXPECT_EQ(int_hop_offset(0), 136U);
}

TEST(PacketKinds, CoreKindsAndDataBit) {
  EXPECT_TRUE(is_data(PacketType::kData));
  for (PacketType t : {PacketType::kAck, PacketType::kNack, PacketType::kCnp, PacketType::kPfc,
                       PacketType::kRequest, PacketType::kGrant}) {
    EXPECT_FALSE(is_data(t));
    EXPECT_LT(kind_number(t), kFirstTransportKind);
  }
  EXPECT_EQ(Packet{}.type, PacketType::kData);
  EXPECT_EQ(packet_kind(20, true), static_cast<PacketType>(0x80 | 20));
  EXPECT_EQ(packet_kind(20, false), static_cast<PacketType>(20));
  EXPECT_EQ(kind_number(packet_kind(20, true)), 20);
}

TEST(PacketKinds, RegistryHandsOutDisjointBlocks) {
  Simulation sim(1);
  PacketKindRegistry& r = sim.packet_kinds();
  const PacketKindBlock uet = r.reserve("uet", 6);
  const PacketKindBlock falcon = r.reserve("falcon", 4);
  EXPECT_EQ(uet.first, kFirstTransportKind);
  EXPECT_EQ(uet.count, 6);
  EXPECT_EQ(falcon.first, kFirstTransportKind + 6);
  // The same owner (one transport per host) gets its block back.
  const PacketKindBlock again = r.reserve("uet", 6);
  EXPECT_EQ(again.first, uet.first);
  EXPECT_EQ(r.free_numbers(), 128 - kFirstTransportKind - 10);

  const PacketType trimmed_nack = uet.kind(3, false);
  const PacketType pull_data = falcon.kind(1, true);
  EXPECT_FALSE(is_data(trimmed_nack));
  EXPECT_TRUE(is_data(pull_data));
  EXPECT_TRUE(uet.owns(trimmed_nack));
  EXPECT_FALSE(falcon.owns(trimmed_nack));
  EXPECT_EQ(uet.index(trimmed_nack), 3);
  EXPECT_EQ(falcon.index(pull_data), 1);
  EXPECT_EQ(r.owner(trimmed_nack), "uet");
  EXPECT_EQ(r.owner(pull_data), "falcon");
  EXPECT_EQ(r.owner(PacketType::kAck), "core");
  EXPECT_EQ(r.owner(packet_kind(120, false)), "");

  // The space runs out cleanly: an empty block, nothing reserved.
  const PacketKindBlock big = r.reserve("big", 103);  // 102 numbers are left
  EXPECT_EQ(big.count, 0);
  EXPECT_EQ(r.free_numbers(), 128 - kFirstTransportKind - 10);
}

TEST(ExtBlocks, OnlyOnDemandAndReturnedWithThePacket) {
  Simulation sim(1);
  PacketPool& pool = sim.pool();
  Packet* plain = pool.acquire();
  EXPECT_EQ(plain->block, 0U);
  pool.release(plain);
  EXPECT_EQ(pool.block_capacity(), 0U);  // a protocol without blocks allocates none

  Packet* p = pool.acquire();
  ExtBlock& b = pool.attach_block(*p);
  EXPECT_NE(p->block, 0U);
  EXPECT_EQ(pool.live_blocks(), 1U);
  for (unsigned char c : b.bytes) ASSERT_EQ(c, 0);
  // A 256-bit SACK bitmap as four words.
  struct Sack {
    uint64_t base;
    uint64_t bits[4];
  };
  Sack s{1000, {0x1, 0x8000000000000000ULL, 0, 0xFF}};
  b.set_at<Sack, 0>(s);
  const Sack back = pool.block(*p).get_at<Sack, 0>();
  EXPECT_EQ(back.base, 1000U);
  EXPECT_EQ(back.bits[1], 0x8000000000000000ULL);
  EXPECT_EQ(back.bits[3], 0xFFU);

  // clone copies the block into a block of its own.
  Packet* c = pool.clone(*p);
  EXPECT_NE(c->uid, p->uid);
  EXPECT_NE(c->block, p->block);
  EXPECT_EQ(pool.live_blocks(), 2U);
  EXPECT_EQ((pool.block(*c).get_at<Sack, 0>().bits[3]), 0xFFU);
  pool.block(*c).set_at<uint64_t, 0>(7);
  EXPECT_EQ((pool.block(*p).get_at<uint64_t, 0>()), 1000U);

  const ExtBlockId last = c->block;
  pool.release(p);
  pool.release(c);
  EXPECT_EQ(pool.live_blocks(), 0U);
  EXPECT_EQ(pool.live(), 0U);
  // A reused block (the last returned: the clone's, holding 7) comes back zeroed.
  Packet* q = pool.acquire();
  EXPECT_EQ(q->block, 0U);
  ExtBlock& b2 = pool.attach_block(*q);
  EXPECT_EQ(q->block, last);
  EXPECT_EQ((b2.get_at<uint64_t, 0>()), 0U);
  pool.release(q);
  EXPECT_EQ(pool.live_blocks(), 0U);
}

TEST(PacketPoolStorage, FreedOnlyWhenNothingIsLiveAndTheHighWaterMarkStays) {
  Simulation sim(1);
  PacketPool& pool = sim.pool();
  std::vector<Packet*> held;
  for (int i = 0; i < 5000; ++i) held.push_back(pool.acquire());  // two chunks of 4,096
  pool.attach_block(*held[0]);
  EXPECT_EQ(pool.capacity(), 8192U);
  EXPECT_EQ(pool.block_capacity(), 1024U);

  // One packet (or one block) still live: nothing is freed, every packet stays readable.
  for (size_t i = 1; i < held.size(); ++i) pool.release(held[i]);
  held[0]->seq = 42;
  EXPECT_FALSE(pool.release_storage());
  EXPECT_EQ(pool.allocated(), 8192U);
  EXPECT_EQ(held[0]->seq, 42U);
  int visited = 0;
  pool.for_each_live([&](const Packet& p) {
    ++visited;
    EXPECT_EQ(p.seq, 42U);
  });
  EXPECT_EQ(visited, 1);

  pool.release(held[0]);
  EXPECT_EQ(pool.allocated(), 8192U);
  EXPECT_TRUE(pool.release_storage());
  EXPECT_EQ(pool.allocated(), 0U);
  EXPECT_EQ(pool.capacity(), 8192U);  // what the run needed at most, for its report
  EXPECT_EQ(pool.block_capacity(), 1024U);
  visited = 0;
  pool.for_each_live([&](const Packet&) { ++visited; });
  EXPECT_EQ(visited, 0);

  // Still a pool: packets and blocks come back with fresh uids and zeroed fields.
  Packet* again = pool.acquire();
  EXPECT_EQ(again->uid, 5000U);
  EXPECT_EQ(again->seq, 0U);
  EXPECT_EQ((pool.attach_block(*again).get_at<uint64_t, 0>()), 0U);
  EXPECT_EQ(pool.live(), 1U);
  EXPECT_EQ(pool.allocated(), 4096U);
  EXPECT_EQ(pool.capacity(), 8192U);  // below the mark: unchanged
  pool.release(again);
}

// A run that ends with nothing live gives the packets' memory back before its report
// (Run::collect); the high-water mark stays for the report.
TEST(PacketPoolStorage, ARunFreesItsPacketsBeforeTheReport) {
  fabsim::Run run(load_scenario_text(test::two_to_one_toml("", "1MB"), "pool.toml"));
  const RunResult r = execute_checked(run);
  EXPECT_EQ(r.packets_live_at_end, 0U);
  EXPECT_GT(run.sim().pool().capacity(), 0U);
  EXPECT_EQ(run.sim().pool().allocated(), 0U);
}
}  // namespace
}  // namespace fabsim
