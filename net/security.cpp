// The security kinds; see security.h. Latency defaults are [UNVERIFIED] except PHYSec's order
// (seed 002: hundreds of ns).
#include "net/security.h"

#include <string>  // descriptions

namespace fabsim {
namespace {

class NoSecurity final : public SecurityKind {
 public:
  std::string_view name() const override { return "none"; }
  std::string_view description() const override { return "no encryption"; }
  KindConfig load(Section& /*s*/) const override { return KindConfig::of(SecurityConfig{}); }
};

// How one encrypting kind costs: where it acts and what it adds.
struct Cost {
  const char* name;
  const char* description;
  bool per_link;  // every hop (link kinds) or the host links only (NIC kinds)
  Time latency;   // default added latency
  int64_t bytes;  // default bytes (0 and not a key for PHYSec)
  bool channel;   // PHYSec channel-level block overhead
  const char* latency_doc;
  const char* bytes_doc;
};

class Encryption final : public SecurityKind {
 public:
  explicit Encryption(const Cost& c) : c_(c) {}
  std::string_view name() const override { return c_.name; }
  std::string_view description() const override { return c_.description; }
  KindConfig load(Section& s) const override {
    SecurityConfig c;
    c.latency = s.time("latency", c_.latency, c_.latency_doc);
    if (c_.bytes > 0) c.bytes = s.integer("bytes", c_.bytes, 0, 1024, c_.bytes_doc);
    if (c_.channel) {
      c.segment_blocks = s.integer("segment_blocks", c.segment_blocks, 1, 1 << 24,
                                   "64B/66B blocks per encrypted segment (each segment adds a "
                                   "D, an S and a T block) [UNVERIFIED]");
    }
    return KindConfig::of(c);
  }
  int64_t header_bytes(const KindConfig& cfg) const override {
    return c_.per_link ? 0 : cfg.get<SecurityConfig>().bytes;
  }
  // Link kinds: every link. NIC kinds: the links between NICs and ToRs (the sender's NIC
  // encrypts, the receiver's decrypts); their bytes are in the transport header already.
  void apply(const KindConfig& cfg, Network& net, const TopologyInfo& topo) const override {
    const auto& c = cfg.get<SecurityConfig>();
    if (c_.per_link) {
      // Channel level: a segment of N blocks becomes ceil(65 N / 64) blocks (65B compression
      // packed into 64-bit payloads) plus a D, an S and a T block.
      const int64_t num = c_.channel ? (65 * c.segment_blocks + 63) / 64 + 3 : 1;
      const int64_t den = c_.channel ? c.segment_blocks : 1;
      for (const auto& link : net.links()) link->add_security(c.latency, c.bytes, num, den);
      return;
    }
    for (size_t h = 0; h < net.host_count(); ++h) {
      const auto host = static_cast<uint32_t>(h);
      net.host(h).port().link()->add_security(c.latency, 0, 1, 1);
      net.sw(topo.tor_switch_of_host(host))
          .port(topo.host_port[h])
          .link()
          ->add_security(c.latency, 0, 1, 1);
    }
  }

 private:
  Cost c_;
};

constexpr const char* kHopLatency =
    "added latency per hop (encrypt + decrypt); PHYSec: hundreds of ns (seed 002)";
constexpr const char* kNicLatency = "added latency per NIC on each side [UNVERIFIED]";

}  // namespace

std::unique_ptr<SecurityKind> make_no_security() {
  return std::make_unique<NoSecurity>();
}
std::unique_ptr<SecurityKind> make_physec_link() {
  return std::make_unique<Encryption>(
      Cost{"physec_link",
           "PHYSec link-level encryption in the optical module: latency, no bytes "
           "(seed 002 §2.2.3)",
           true, Time::ns(100), 0, false, kHopLatency, ""});
}
std::unique_ptr<SecurityKind> make_physec_channel() {
  return std::make_unique<Encryption>(
      Cost{"physec_channel",
           "PHYSec channel-level encryption of the 64B/66B block stream: latency "
           "and a D + S/T blocks per segment (seed 002 §2.2.3)",
           true, Time::ns(100), 0, true, kHopLatency, ""});
}
std::unique_ptr<SecurityKind> make_macsec() {
  return std::make_unique<Encryption>(
      Cost{"macsec", "MACsec (IEEE 802.1AE) on every link: latency and bytes per frame", true,
           Time::ns(200), 32, false, "added latency per hop (encrypt + decrypt) [UNVERIFIED]",
           "bytes added per frame: SecTAG 16 + ICV 16"});
}
std::unique_ptr<SecurityKind> make_ipsec() {
  return std::make_unique<Encryption>(Cost{
      "ipsec", "IPsec ESP end to end (per NIC): latency and bytes per packet", false, Time::ns(500),
      36, false, kNicLatency, "bytes added per packet: ESP transport mode with AES-GCM"});
}
std::unique_ptr<SecurityKind> make_psp() {
  return std::make_unique<Encryption>(
      Cost{"psp", "PSP end to end (per NIC): latency and bytes per packet", false, Time::ns(300),
           40, false, kNicLatency, "bytes added per packet: UDP 8 + PSP header 16 + ICV 16"});
}

}  // namespace fabsim
