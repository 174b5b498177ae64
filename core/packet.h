// The packet: a compact plain struct with no payload bytes and no serialized headers
// (DESIGN.md "The engine"). Protocol-specific fields live in a small tagged area (`ext`) read and
// written through typed accessors, so the struct does not grow with every protocol.
#pragma once

#include <cstddef>      // size_t
#include <cstdint>      // fixed-width fields
#include <cstring>      // memcpy for the protocol area
#include <type_traits>  // is_trivially_copyable

#include "core/units.h"

namespace fabsim {

enum class PacketType : uint8_t {
  kData,   // transport payload
  kAck,    // transport acknowledgement
  kNack,   // negative acknowledgement / sequence error
  kCnp,    // DCQCN congestion notification
  kPfc,    // IEEE 802.1Qbb pause frame (link-local, never forwarded)
  kRequest,  // GSE DGSQ: a source GSP asks a destination egress port for bytes
  kGrant,    // GSE DGSQ: the destination egress port grants bytes
};

/// ECN codepoint (RFC 3168), the two IP header bits.
enum class Ecn : uint8_t { kNotEct = 0, kEct = 2, kCe = 3 };

/// Number of traffic classes per egress port; class 7 is the strict-priority control class.
inline constexpr int kNumClasses = 8;
inline constexpr uint8_t kControlClass = 7;

struct Packet {
  uint64_t uid = 0;          // unique per simulation, for traces
  Time sent;                 // stamped by the sending transport
  uint64_t seq = 0;          // transport-defined sequence number
  uint32_t flow = 0;         // flow id (index into the run's flow table)
  uint32_t endpoint = 0;     // receiving endpoint id at the destination host
  uint32_t src = 0;          // source host id
  uint32_t dst = 0;          // destination host id
  uint32_t payload = 0;      // payload bytes
  uint32_t size = 0;         // frame bytes: payload + headers (preamble and IFG excluded)
  uint16_t sport = 0;        // UDP source port (ECMP entropy)
  uint16_t dport = 4791;     // UDP destination port (RoCEv2)
  uint16_t in_port = 0;      // scratch: ingress port at the switch currently holding it
  PacketType type = PacketType::kData;
  uint8_t tclass = 0;        // traffic class 0..7
  Ecn ecn = Ecn::kNotEct;
  uint8_t flags = 0;         // transport-defined bits, and kFabricHeader
  alignas(8) unsigned char ext[32] = {};  // protocol-specific area

  template <typename T>
  T get_ext() const {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(ext));
    T out;
    std::memcpy(&out, ext, sizeof(T));
    return out;
  }
  template <typename T>
  void set_ext(const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(ext));
    std::memcpy(ext, &v, sizeof(T));
  }
  template <typename T, size_t Offset>
  T get_ext_at() const {
    static_assert(std::is_trivially_copyable_v<T> && Offset + sizeof(T) <= sizeof(ext));
    T out;
    std::memcpy(&out, ext + Offset, sizeof(T));
    return out;
  }
  template <typename T, size_t Offset>
  void set_ext_at(const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && Offset + sizeof(T) <= sizeof(ext));
    std::memcpy(ext + Offset, &v, sizeof(T));
  }
};

/// Packet::flags bit set while a fabric header (GSE) is on the packet; the header's fields live
/// in the second half of the protocol area, so transports keep the first half.
inline constexpr uint8_t kFabricHeader = 0x80;
inline constexpr size_t kFabricExtOffset = 16;

/// The protocol area of a PFC frame: one class per frame; quanta 0 means XON (resume).
struct PfcInfo {
  uint8_t cls = 0;
  uint16_t quanta = 0;  // pause time in units of 512 bit times at the link rate
};

}  // namespace fabsim

namespace fabsim {
static_assert(sizeof(Packet) == 96, "keep the packet compact (docs/MODEL.md)");
}  // namespace fabsim
