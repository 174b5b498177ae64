// The security family (`[security] kind`): the cost of encryption as link or NIC properties
// (docs/SECURITY.md; seed 002 §1.2.3, §2.2.3). Link kinds act on every link (each hop encrypts
// and decrypts): PHYSec link-level (latency, no bytes), PHYSec channel-level (a D, an S and a T
// block per segment of 64B/66B blocks), MACsec (bytes per frame). NIC kinds (IPsec ESP, PSP)
// act on the host links and add their bytes to every packet's header. Registered in
// scenario/kinds.cpp.
#pragma once

#include <cstdint>      // bytes
#include <memory>       // unique_ptr
#include <string_view>  // names

#include "config/reader.h"
#include "config/registry.h"
#include "net/network.h"
#include "net/topology.h"

namespace fabsim {

struct SecurityConfig {
  Time latency;                   // per hop (link kinds) or per NIC, each way (NIC kinds)
  int64_t bytes = 0;              // per frame (macsec) or per packet (ipsec, psp)
  int64_t segment_blocks = 1024;  // physec_channel: 64B/66B blocks per encrypted segment
};

class SecurityKind {
 public:
  virtual ~SecurityKind() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual KindConfig load(Section& s) const = 0;
  /// Bytes every packet's header grows by (end-to-end kinds).
  virtual int64_t header_bytes(const KindConfig& /*cfg*/) const { return 0; }
  /// Applies the cost to the links of a built network.
  virtual void apply(const KindConfig& /*cfg*/, Network& /*net*/,
                     const TopologyInfo& /*topo*/) const {}
};

std::unique_ptr<SecurityKind> make_no_security();
std::unique_ptr<SecurityKind> make_physec_link();
std::unique_ptr<SecurityKind> make_physec_channel();
std::unique_ptr<SecurityKind> make_macsec();
std::unique_ptr<SecurityKind> make_ipsec();
std::unique_ptr<SecurityKind> make_psp();

}  // namespace fabsim
