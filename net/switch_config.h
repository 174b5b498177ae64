// Configuration of a switch: shared buffer, PFC, ECN and egress scheduling.
// Defaults and their sources are listed in docs/MODEL.md; REFERENCE.md §1.3-1.4.
#pragma once

#include <array>    // DWRR weights
#include <cstdint>  // masks

#include "core/packet.h"
#include "core/units.h"

namespace fabsim {

struct BufferConfig {
  /// Shared packet buffer per switch. Default 32 MiB, a Trident3-class (3.2 Tb/s) switch.
  Bytes size = Bytes(32LL << 20);
  /// Bytes reserved per (ingress port, lossless class) before the shared pool is used.
  Bytes reserve = Bytes(4096);
  /// Dynamic-threshold alpha for lossy classes at egress: a queue may hold at most
  /// alpha x (free buffer) (Choudhury-Hahne).
  double egress_alpha = 1.0;
};

enum class PfcThreshold : uint8_t { kDynamic, kStatic };

struct PfcConfig {
  bool enabled = true;
  /// Bit c set = class c is lossless (PFC-protected). Default: class 3, the usual RoCE class.
  uint8_t lossless_mask = 1U << 3;
  PfcThreshold mode = PfcThreshold::kDynamic;
  /// Dynamic XOFF threshold = alpha x (buffer - headroom - reserve - shared in use); alpha
  /// doubles per doubling of port rate over the host NIC rate, up to 1, when `scale_alpha`
  /// (HPCC ns-3).
  double alpha = 0.125;
  bool scale_alpha = true;
  Bytes resume_offset = Bytes(3072);  // dynamic XON hysteresis
  Bytes xoff = Bytes(0);              // static XOFF: shared bytes per (port, class)
  Bytes xon = Bytes(0);               // static XON
  /// Headroom per (port, lossless class); 0 = sized from the link (see Switch::auto_headroom).
  Bytes headroom = Bytes(0);
  /// Reaction latency of the upstream MAC to a pause frame, added to the auto headroom.
  Time response_time = Time::ns(0);
  /// Pause time carried by XOFF frames, in 512-bit quanta; XOFF is refreshed at half of it.
  uint16_t pause_quanta = 0xFFFF;
};

struct EcnConfig {
  bool enabled = true;
  /// RED marking at dequeue on the queue behind the packet: none at or below kmin, probability
  /// rising linearly to pmax at kmax, always above kmax. DCQCN paper values (REFERENCE.md §1.4).
  Bytes kmin = Bytes(5000);
  Bytes kmax = Bytes(200000);
  double pmax = 0.01;
  /// > 0: kmin and kmax are these fractions of one BDP (the NIC rate x the fabric's longest
  /// unloaded round trip) in packets of the largest frame, each rounded up to whole packets
  /// (uet-htsim's ceil(0.2 x BDP) and ceil(0.8 x BDP), REFERENCE.md §4.7, §9.3.3); the run
  /// sets kmin and kmax from them when it has built the fabric (Switch::set_ecn_thresholds).
  double kmin_bdp = 0;
  double kmax_bdp = 0;
  /// > 0: kmin and kmax are for a port of this rate and scale linearly with each port's rate
  /// (HPCC ns-3's KMIN_MAP / KMAX_MAP: 400/1600 KB at 100G, 1600/6400 KB at 400G).
  Rate reference_rate;
  /// Where the rule looks at the queue: false = when the port starts sending the packet
  /// (REFERENCE.md §7.1); true = when its last bit has left, so what arrived meanwhile counts
  /// (uet-htsim's CompositeQueue marks in completeService). [UNVERIFIED] which one a given
  /// switch ASIC does; `network.ecn.mark_at`.
  bool at_departure = false;
  /// ToR ports towards hosts mark too; false with receiver credit (the spec's advice, and
  /// uet-htsim's with receiver-driven CC: the last hop is the receiver pacer's to manage).
  bool host_ports = true;
};

struct SwitchConfig {
  BufferConfig buffer;
  PfcConfig pfc;
  EcnConfig ecn;
  /// Largest frame the fabric carries (payload + headers), for headroom and DWRR quanta.
  int64_t max_frame_bytes = 4096 + 62;
  /// DWRR weight of each data class; quantum = weight x max frame.
  std::array<uint32_t, kNumClasses> dwrr_weights{1, 1, 1, 1, 1, 1, 1, 1};
};

}  // namespace fabsim
