// The packet: a compact plain struct with no payload bytes and no serialized headers
// (DESIGN.md "The engine", "Packet room").
//
// Why it looks like this:
//  - Every protocol pays for every byte of Packet on every hop (pool, rings, copies), so the
//    struct stays at 96 bytes: the fields all protocols share, plus a 32-byte inline area
//    (`ext`, 16 bytes for the transport and 16 for the fabric) that covers RoCE, the datagram
//    transport and the GSE header.
//  - Protocol state that does not fit (a 256-bit SACK bitmap, a 5-hop INT stack, Ultra Ethernet
//    PDS/SES or Falcon headers) goes in an optional extension block: 256 bytes from a side pool
//    of the simulation's PacketPool, named by a 4-byte handle that sits in what was padding.
//    Only a protocol that needs one attaches one; the pool returns it with the packet. RoCE and
//    GSE never attach a block, so their cost is one predictable branch at release.
//  - The packet kind is an open 8-bit code. The core names its kinds below; a transport asks
//    the simulation's PacketKindRegistry (core/packet_kinds.h) for a block of codes of its own
//    instead of editing this file. Switches look at two properties only: the traffic class
//    (the control class is strict priority and bypasses buffer admission) and whether the kind
//    carries payload (is_data), which is a bit of the code so it costs one AND.
#pragma once

#include <cstddef>      // size_t, offsetof
#include <cstdint>      // fixed-width fields
#include <cstring>      // memcpy for the protocol areas
#include <type_traits>  // is_trivially_copyable

#include "core/assert.h"
#include "core/units.h"

namespace fabsim {

/// Bit of a packet kind code set when the kind carries transport payload (data).
/// IEEE 802.3's minimum frame, FCS included: Ethernet pads a shorter one to it.
inline constexpr int64_t kMinEthernetFrame = 64;

inline constexpr uint8_t kDataKindBit = 0x80;
/// Kind numbers (the code without kDataKindBit) below this are the core's; transports get
/// blocks of the numbers from here to 127 from the PacketKindRegistry.
inline constexpr uint8_t kFirstTransportKind = 16;

/// The kind of a packet: an open 8-bit code. Values other than the named ones are transport
/// kinds (PacketKindRegistry); make them with packet_kind().
enum class PacketType : uint8_t {
  kAck = 1,                  // transport acknowledgement
  kNack = 2,                 // negative acknowledgement / sequence error
  kCnp = 3,                  // DCQCN congestion notification
  kPfc = 4,                  // IEEE 802.1Qbb pause frame (link-local, never forwarded)
  kRequest = 5,              // GSE DGSQ: a source GSP asks a destination egress port for bytes
  kGrant = 6,                // GSE DGSQ: the destination egress port grants bytes
  kData = kDataKindBit | 0,  // transport payload
};
/// A packet kind code for kind number `number` (< 128), with or without payload.
constexpr PacketType packet_kind(uint8_t number, bool data) {
  return static_cast<PacketType>((number & 0x7F) | (data ? kDataKindBit : 0));
}
/// True if packets of this kind carry transport payload (switches count them as data, spraying
/// and containers apply to them).
constexpr bool is_data(PacketType t) {
  return (static_cast<uint8_t>(t) & kDataKindBit) != 0;
}
/// The kind number of a code (its position in the registry's space).
constexpr uint8_t kind_number(PacketType t) {
  return static_cast<uint8_t>(t) & 0x7F;
}

/// ECN codepoint (RFC 3168), the two IP header bits.
enum class Ecn : uint8_t { kNotEct = 0, kEct = 2, kCe = 3 };

/// Number of traffic classes per egress port; class 7 is the strict-priority control class.
inline constexpr int kNumClasses = 8;
inline constexpr uint8_t kControlClass = 7;

/// Packet::flags bits owned by the fabric; transports use the others (0x01..0x10).
/// kFabricHeader: a fabric header (GSE) is on the packet; its fields live in the fabric half of
/// the protocol area, so transports keep the first half.
inline constexpr uint8_t kFabricHeader = 0x80;
/// kTrimmed: a switch cut the packet to its headers (payload 0) and sent it on in the control
/// class (packet trimming, Ultra Ethernet / NDP).
inline constexpr uint8_t kTrimmed = 0x40;
/// kTrimmedLastHop: with kTrimmed, the cut was made at a switch port towards a host (the last
/// hop), where the receiver's own pacing answers for it (uet-htsim compares hop counts).
inline constexpr uint8_t kTrimmedLastHop = 0x20;
inline constexpr size_t kFabricExtOffset = 16;

/// Packet::ledger of a packet that sits free in the pool (PacketPool::for_each_live skips it).
inline constexpr uint8_t kPacketFree = 0x80;

/// Handle of an extension block in the PacketPool (0 = none).
using ExtBlockId = uint32_t;

struct alignas(32) Packet {
  uint64_t uid = 0;       // unique per simulation, for traces
  Time sent;              // stamped by the sending transport
  uint64_t seq = 0;       // transport-defined sequence number
  uint32_t flow = 0;      // flow id (index into the run's flow table)
  uint32_t endpoint = 0;  // receiving endpoint id at the destination host
  uint32_t src = 0;       // source host id
  uint32_t dst = 0;       // destination host id
  uint32_t payload = 0;   // payload bytes
  uint32_t size = 0;      // frame bytes: payload + headers (preamble and IFG excluded)
  uint16_t sport = 0;     // UDP source port (ECMP entropy)
  uint16_t dport = 4791;  // UDP destination port (RoCEv2)
  uint16_t in_port = 0;   // scratch: ingress port at the switch currently holding it
  PacketType type = PacketType::kData;
  uint8_t tclass = 0;  // traffic class 0..7
  Ecn ecn = Ecn::kNotEct;
  uint8_t flags = 0;     // transport-defined bits, and the fabric's (kFabricHeader, kTrimmed)
  uint8_t ledger = 0;    // conservation ledger state (core/ledger.h); kPacketFree in the pool
  ExtBlockId block = 0;  // extension block (PacketPool::attach_block), 0 = none
  alignas(8) unsigned char ext[32] = {};  // protocol-specific area

  template <typename T> T get_ext() const {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(ext));
    T out;
    std::memcpy(&out, ext, sizeof(T));
    return out;
  }
  template <typename T> void set_ext(const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(ext));
    std::memcpy(ext, &v, sizeof(T));
  }
  template <typename T, size_t Offset> T get_ext_at() const {
    static_assert(std::is_trivially_copyable_v<T> && Offset + sizeof(T) <= sizeof(ext));
    T out;
    std::memcpy(&out, ext + Offset, sizeof(T));
    return out;
  }
  template <typename T, size_t Offset> void set_ext_at(const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && Offset + sizeof(T) <= sizeof(ext));
    std::memcpy(ext + Offset, &v, sizeof(T));
  }
};

/// The out-of-line protocol area of a packet: 256 bytes, the first half for the transport
/// (SACK bitmaps, Ultra Ethernet PDS/SES headers, Falcon headers) and the second half for the
/// fabric (the INT stack). Read and written through typed accessors, like Packet::ext.
struct ExtBlock {
  static constexpr size_t kBytes = 256;
  static constexpr size_t kTransportBytes = 128;
  static constexpr size_t kFabricOffset = kTransportBytes;
  alignas(8) unsigned char bytes[kBytes] = {};

  template <typename T, size_t Offset> T get_at() const {
    static_assert(std::is_trivially_copyable_v<T> && Offset + sizeof(T) <= kBytes);
    T out;
    std::memcpy(&out, bytes + Offset, sizeof(T));
    return out;
  }
  template <typename T, size_t Offset> void set_at(const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && Offset + sizeof(T) <= kBytes);
    std::memcpy(bytes + Offset, &v, sizeof(T));
  }
  /// Run-time offsets (records in an array); checked by assert.
  template <typename T> T get(size_t offset) const {
    static_assert(std::is_trivially_copyable_v<T>);
    FABSIM_ASSERT(offset + sizeof(T) <= kBytes);
    T out;
    std::memcpy(&out, bytes + offset, sizeof(T));
    return out;
  }
  template <typename T> void set(size_t offset, const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    FABSIM_ASSERT(offset + sizeof(T) <= kBytes);
    std::memcpy(bytes + offset, &v, sizeof(T));
  }
};

/// One hop of an HPCC-style INT stack (REFERENCE.md §2.3), pushed by an egress port at dequeue.
/// Full-width values rather than HPCC's packed wire fields: the simulator carries no header
/// bytes, so nothing is lost to units or wraparound (the transport sizes the header it sends).
struct IntHop {
  Time ts;                 // when the port started sending the packet
  uint64_t tx_bytes = 0;   // frame bytes the port sent before this packet
  uint32_t qlen = 0;       // bytes queued at the port (every class) behind the packet
  uint32_t rate_mbps = 0;  // the port's link rate in Mb/s
};
inline constexpr int kMaxIntHops = 5;
/// The INT stack header in the fabric half of the extension block; hop records follow it.
/// The transport that wants INT sets `capacity` (1..kMaxIntHops); stamping stops when full.
struct IntStackHeader {
  uint8_t hops = 0;
  uint8_t capacity = 0;
  uint8_t overflow = 0;  // hops that found the stack full (saturates at 255)
};
inline constexpr size_t kIntHeaderOffset = ExtBlock::kFabricOffset;
inline constexpr size_t kIntHopsOffset = ExtBlock::kFabricOffset + 8;
constexpr size_t int_hop_offset(int i) {
  return kIntHopsOffset + static_cast<size_t>(i) * sizeof(IntHop);
}

/// The protocol area of a PFC frame: one class per frame; quanta 0 means XON (resume).
struct PfcInfo {
  uint8_t cls = 0;
  uint16_t quanta = 0;  // pause time in units of 512 bit times at the link rate
};

// Sizes the hot path depends on, and the room the next transports need.
static_assert(sizeof(Packet) == 96, "keep the packet compact (docs/MODEL.md)");
static_assert(offsetof(Packet, ext) == 64, "the block handle must live in former padding");
static_assert(sizeof(ExtBlock) == 256);
static_assert(sizeof(IntHop) == 24);
static_assert(int_hop_offset(kMaxIntHops) <= ExtBlock::kBytes, "5 INT hops fit the fabric half");
// A 256-bit SACK bitmap (32 B) plus an Ultra Ethernet PDS request (16 B) and SES standard header
// (44 B), or a Falcon transaction header plus a 256-bit bitmap, fit the transport half.
static_assert(32 + 16 + 44 <= ExtBlock::kTransportBytes);

}  // namespace fabsim
