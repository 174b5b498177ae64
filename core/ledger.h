// The conservation ledger (issue 14 item 6; docs/MODEL.md "The conservation ledger"): every
// packet that enters the network is accounted for at the end of a run, per traffic class, as
// delivered, dropped by a named cause, or still in the network.
//
//  - A packet is *injected* when a host's NIC starts sending it, or when a switch creates it
//    (PFC frames, GSE requests and grants). Retransmissions are new packets.
//  - It is *delivered* when it reaches its consumer: a host endpoint (Host::deliver), or the
//    switch or NIC agent a control frame is for (a PFC frame, a request or grant).
//  - It is *dropped* with a cause wherever the simulation discards it.
//  - Trimming (Ultra Ethernet / NDP) drops a packet's payload but not the packet: its payload
//    bytes are counted as trimmed and the header goes on.
//  - At the end, a walk over the packet pool counts, per class of injection, the packets still
//    in queues, on wires or held (reorder buffers, VOQs). The walk does not use the counters,
//    so the balance below is a real check:
//        injected = delivered + dropped (every cause) + in flight        (packets)
//        injected = delivered + dropped + trimmed + in flight            (payload bytes)
//    and no packet may be delivered or dropped twice, or without having been injected.
// Bytes are payload bytes (what the transport offered), the quantity a fabric may not lose;
// frame bytes change on the way (GSE adds and removes its header).
// A packet records its class at injection and its state in Packet::ledger, so a packet whose
// class changes in flight (a trimmed packet moves to the control class) is counted once, in the
// class it was injected in.
#pragma once

#include <array>        // per-class tallies
#include <cstdint>      // counters
#include <string>       // violation text
#include <string_view>  // cause names

#include "core/packet.h"
#include "core/packet_pool.h"

namespace fabsim {

/// Why a packet left the network without being delivered.
enum class DropCause : uint8_t {
  kBuffer,          // a switch's shared buffer had no room for it (queue or hold)
  kAdmission,       // an admission hook chose to drop it (net/hooks.h)
  kRandomLoss,      // the link's Bernoulli loss model (network.loss_probability, network.loss)
  kBurstLoss,       // the link's Gilbert-Elliott loss model (network.loss.model = "gilbert")
  kBitError,        // an uncorrectable bit error (link BER after FEC)
  kDeadLink,        // sent into, or on the wire of, a cable that was down
  kUnroutable,      // no route to its destination (every path failed)
  kReorderDiscard,  // a GSE reorder buffer had no room for it
  kCount
};
inline constexpr int kDropCauses = static_cast<int>(DropCause::kCount);
/// The name of a cause as it appears in summary.json and the docs.
std::string_view drop_cause_name(DropCause c);

/// Packets and payload bytes.
struct Tally {
  uint64_t packets = 0;
  uint64_t bytes = 0;
  void add(const Packet& p) {
    ++packets;
    bytes += p.payload;
  }
  Tally& operator+=(const Tally& o) {
    packets += o.packets;
    bytes += o.bytes;
    return *this;
  }
  bool operator==(const Tally&) const = default;
};

/// The ledger of one traffic class (the class a packet was injected in).
struct ClassLedger {
  Tally injected;
  Tally delivered;
  std::array<Tally, kDropCauses> dropped{};
  uint64_t trimmed_bytes = 0;  // payload cut off by trimming
  Tally in_flight;             // from the pool walk at the end of the run
  Tally dropped_total() const {
    Tally t;
    for (const Tally& d : dropped) t += d;
    return t;
  }
  /// injected = delivered + dropped + in flight (+ trimmed bytes).
  bool balanced() const;
};

/// The closed ledger of a run: what Ledger::close found.
struct LedgerReport {
  std::array<ClassLedger, kNumClasses> classes{};
  uint64_t unsent = 0;  // packets a sender built that never reached a wire (not in the balance)
  uint64_t double_counted = 0;     // delivered or dropped twice, or never injected
  uint64_t consumed_but_live = 0;  // delivered or dropped and still not returned to the pool
  bool closed = false;             // close() ran (a run that was never executed has no ledger)
  ClassLedger total() const;
  /// Every class balances and nothing was double counted or leaked.
  bool balanced() const;
  /// A one-line description of the first imbalance ("" if balanced).
  std::string violation() const;
};

class Ledger {
 public:
  /// Packet::ledger: bits 0-2 the class of injection, then the packet's state.
  static constexpr uint8_t kClassMask = 0x07;
  static constexpr uint8_t kInjected = 0x10;
  static constexpr uint8_t kDone = 0x20;  // delivered or dropped

  /// `p` enters the network in its current class.
  void inject(Packet& p) {
    if (p.ledger & kInjected) [[unlikely]] {
      ++double_counted_;
      return;
    }
    p.ledger = static_cast<uint8_t>(kInjected | (p.tclass & kClassMask));
    classes_[p.tclass & kClassMask].injected.add(p);
  }
  /// `p` reached its consumer.
  void deliver(Packet& p) {
    if (ClassLedger* c = settle(p)) c->delivered.add(p);
  }
  /// `p` is discarded for `cause` (the caller returns it to the pool).
  void drop(Packet& p, DropCause cause) {
    if (ClassLedger* c = settle(p)) c->dropped[static_cast<int>(cause)].add(p);
  }
  /// `p`'s payload is about to be cut off (trimming); the packet itself goes on.
  void trim(const Packet& p) { classes_[p.ledger & kClassMask].trimmed_bytes += p.payload; }

  /// The counters so far, with the in-flight tallies from a walk of `pool` (call before the
  /// network returns its queued packets to the pool).
  LedgerReport close(const PacketPool& pool) const;

 private:
  ClassLedger* settle(Packet& p) {
    if ((p.ledger & (kInjected | kDone)) != kInjected) [[unlikely]] {
      ++double_counted_;
      return nullptr;
    }
    p.ledger = static_cast<uint8_t>(p.ledger | kDone);
    return &classes_[p.ledger & kClassMask];
  }
  std::array<ClassLedger, kNumClasses> classes_{};
  uint64_t double_counted_ = 0;
};

}  // namespace fabsim
