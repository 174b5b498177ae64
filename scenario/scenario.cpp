// Scenario loading, validation and the parameter catalogue; see scenario.h. This file parses
// the common sections and dispatches each family's section to the registered kind
// (scenario/kinds.h); it knows no kind by name.
#include "scenario/scenario.h"

#include <fmt/format.h>  // messages

#include <algorithm>  // find (repeated seeds)
#include <cctype>     // isalnum (scenario names)
#include <fstream>    // file existence check
#include <limits>     // numeric bounds
#include <utility>    // loss scope table

#include "lb/ecmp.h"  // the selector of the topology built to check fault cables

namespace fabsim {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
const Bytes kMaxBytes = Bytes(std::numeric_limits<int64_t>::max() / 16);

/// Reads a family's kind key and lets the chosen kind load its own keys from `s`.
template <typename Kind, typename... Env>
Choice<Kind> choose(Section& s, std::string_view key, std::string_view def,
                    const Registry<Kind>& reg, std::string_view doc, const Env&... env) {
  Choice<Kind> c;
  const std::string name = s.choice(key, def, reg.names(), doc);
  c.kind = reg.find(name);
  FABSIM_CHECK(c.kind != nullptr);  // choice() accepts registered names only
  c.config = c.kind->load(s, env...);
  return c;
}

void load_sweep(Section& s, SweepConfig& sw) {
  const auto sizes = s.sizes("sizes", {}, Bytes(1), "values of \"$size\", each a separate run");
  // A repeated size or collective would run the same cases twice, write them to the same
  // directory and count them twice in the medians (as a repeated seed would).
  for (auto b : sizes) {
    if (std::find(sw.sizes.begin(), sw.sizes.end(), b.count()) != sw.sizes.end()) {
      s.fail("sizes", fmt::format("distinct sizes ({} B appears twice)", b.count()));
    }
    sw.sizes.push_back(b.count());
  }
  const std::string doc = "values of \"$collective\", each a separate run";
  if (s.describing()) {
    s.text("collectives", "[]", doc);
  } else if (s.has("collectives")) {
    const auto names = s.strings("collectives", doc);
    for (size_t i = 0; i < names.size(); ++i) {
      Collective c{};
      if (!parse_collective(names[i], &c)) {
        s.fail("collectives",
               fmt::format("collective names ({}), got \"{}\"", collective_choices(), names[i]));
      }
      if (std::find(sw.collectives.begin(), sw.collectives.end(), c) != sw.collectives.end()) {
        s.fail("collectives",
               fmt::format("distinct collectives (\"{}\" names one already listed)", names[i]));
      }
      sw.collectives.push_back(c);
    }
  }
  const auto seeds = s.integers("seeds", {}, 0, std::numeric_limits<int64_t>::max(),
                                "RNG seeds; each case runs once per seed (median, min, max)");
  for (auto v : seeds) {
    // A repeated seed would run the same case twice and count it twice in the medians.
    if (std::find(sw.seeds.begin(), sw.seeds.end(), static_cast<uint64_t>(v)) != sw.seeds.end()) {
      s.fail("seeds", fmt::format("distinct seeds ({} appears twice)", v));
    }
    sw.seeds.push_back(static_cast<uint64_t>(v));
  }
}

void load_simulation(Section& s, ScenarioConfig& c) {
  c.seed = static_cast<uint64_t>(s.integer("seed", 1, 0, std::numeric_limits<int64_t>::max(),
                                           "RNG seed (ECMP hash seeds, permutations, losses)"));
  c.stop_time = s.time("stop_time", Time::ms(1000),
                       "simulated-time limit; the run ends earlier when every flow is done");
  if (!s.describing() && c.stop_time <= Time()) s.fail("stop_time", "a positive duration");
}

// Priority flow control with dynamic or static thresholds and headroom.
void load_pfc(Section& p, PfcConfig& pfc) {
  pfc.enabled = p.boolean("enabled", pfc.enabled, "PFC on the lossless classes");
  const auto classes = p.integers("lossless_classes", {3}, 0, 6, "classes PFC protects");
  pfc.lossless_mask = 0;
  for (auto c : classes) pfc.lossless_mask = static_cast<uint8_t>(pfc.lossless_mask | (1U << c));
  if (!p.describing() && pfc.enabled && pfc.lossless_mask == 0) {
    p.fail("lossless_classes", "at least one class while PFC is enabled (or enabled = false)");
  }
  pfc.mode = p.choice("threshold", "dynamic", {"dynamic", "static"},
                      "dynamic: XOFF at alpha x free buffer; static: fixed xoff/xon") == "static"
                 ? PfcThreshold::kStatic
                 : PfcThreshold::kDynamic;
  pfc.alpha =
      p.real("alpha", pfc.alpha, 1.0 / 1024, 64, "dynamic-threshold alpha (HPCC ns-3: 1/8)");
  pfc.scale_alpha = p.boolean("scale_alpha", pfc.scale_alpha,
                              "double alpha per doubling of port rate over the host NIC rate, up "
                              "to 1 (HPCC ns-3)");
  pfc.resume_offset = p.bytes("resume_offset", pfc.resume_offset, Bytes(0), kMaxBytes,
                              "dynamic XON hysteresis below the threshold");
  pfc.xoff = p.bytes("xoff", pfc.xoff, Bytes(0), kMaxBytes, "static XOFF (shared bytes)");
  pfc.xon = p.bytes("xon", pfc.xon, Bytes(0), kMaxBytes, "static XON (shared bytes)");
  pfc.headroom = p.bytes("headroom", pfc.headroom, Bytes(0), kMaxBytes,
                         "headroom per (port, lossless class); 0 = 2 x link BDP + 2 max frames "
                         "+ pause frame + response time");
  pfc.response_time =
      p.time("response_time", pfc.response_time, "upstream reaction time added to headroom");
  pfc.pause_quanta = static_cast<uint16_t>(p.integer(
      "pause_quanta", pfc.pause_quanta, 1, 65535, "pause time of XOFF frames in 512-bit quanta"));
  if (!p.describing() && pfc.mode == PfcThreshold::kStatic) {
    if (pfc.xoff.count() == 0) p.fail("xoff", "a positive size when threshold = \"static\"");
    if (pfc.xon > pfc.xoff) p.fail("xon", "at most network.pfc.xoff");
  }
}

// `[network.loss]`. `network.loss_probability` (`has_top`, value `top`) stays the short form of
// a Bernoulli loss; given together with the table's own model keys it is an error rather than
// an alias, so a scenario says its loss once. Only the chosen model's keys are read (and so
// recorded), so the effective scenario can be given again.
void load_loss(Section& l, bool has_top, double top, NetworkConfig& n) {
  const bool gilbert =
      l.choice("model", "bernoulli", {"bernoulli", "gilbert"},
               "bernoulli: each frame lost independently; gilbert: Gilbert-Elliott two-state "
               "bursty loss") == "gilbert";
  const bool all = l.describing();
  if (!all) {
    if (has_top && l.has("probability")) {
      l.fail("probability", "network.loss_probability or network.loss.probability, not both");
    }
    if (has_top && gilbert) {
      l.fail("model", "\"bernoulli\" when network.loss_probability is given (or move the loss "
                      "into [network.loss])");
    }
    if (gilbert && l.has("probability")) {
      l.fail("probability", "only with model = \"bernoulli\"");
    }
    for (const char* key : {"p", "r", "loss_bad", "loss_good"}) {
      if (!gilbert && l.has(key)) l.fail(key, "only with model = \"gilbert\"");
    }
  }
  if (all || (!gilbert && !has_top)) {
    n.loss = LossModel::bernoulli(
        l.real("probability", 0.0, 0.0, 1.0, "bernoulli: loss probability per frame per link"));
  } else if (!gilbert) {
    n.loss = LossModel::bernoulli(top);
  }
  if (all || gilbert) {
    const double p = l.real("p", 0.0, 0.0, 1.0, "gilbert: P(good -> bad) per frame");
    const double r = l.real("r", 1.0, 0.0, 1.0,
                            "gilbert: P(bad -> good) per frame, > 0 (mean bad burst 1/r frames)");
    const double loss_bad =
        l.real("loss_bad", 1.0, 0.0, 1.0, "gilbert: loss probability in the bad state (h)");
    const double loss_good =
        l.real("loss_good", 0.0, 0.0, 1.0, "gilbert: loss probability in the good state (k)");
    if (!all && !(r > 0)) l.fail("r", "a number in (0, 1] (the bad state must end)");
    if (gilbert) n.loss = LossModel::gilbert(p, r, loss_bad, loss_good);
  }
  const std::string links = l.choice(
      "links", "all", {"all", "host_up", "host_down", "hosts", "fabric"},
      "links with the model: host_up = NIC -> switch, host_down = switch -> NIC, hosts = both, "
      "fabric = switch -> switch");
  static constexpr std::pair<std::string_view, LossScope> kScopes[] = {
      {"all", LossScope::kAll},
      {"host_up", LossScope::kHostUp},
      {"host_down", LossScope::kHostDown},
      {"hosts", LossScope::kHosts},
      {"fabric", LossScope::kFabric}};
  for (const auto& [name, scope] : kScopes) {
    if (links == name) n.loss_links = scope;
  }
}

// A switch holding XOFF renews it every half pause (quanta x 512 bit times / 2), but never
// faster than pause frames ((64 B + preamble and gap) x 8: 672 bits, 512 without framing) fit
// on the link (net/switch.cpp
// refresh_after), and pause frames go at strict priority. Short pauses make the renewals a
// large share of the port's link for as long as XOFF holds: above half of it, a warning
// (soak seed 9 no. 1486, pause_quanta = 1: pause frames back to back on every link, 15 data
// packets delivered in 5 ms). Independent of the link rate. A warning: the soak runs such
// pauses on purpose.
void check_pause_quanta(Section& p, const NetworkConfig& n) {
  const PfcConfig& pfc = n.sw.pfc;
  if (p.describing() || !pfc.enabled) return;
  const int64_t half_pause_bits = int64_t{pfc.pause_quanta} * 256;
  const int64_t frame_bits = (64 + n.framing_bytes) * 8;
  const int64_t period = std::max(half_pause_bits, frame_bits);
  if (2 * frame_bits <= period) return;
  p.warn("pause_quanta",
         fmt::format("{} quanta: a switch holding XOFF renews the pause every {} bit times with a "
                     "pause frame of {} bit times at strict priority, {:.0f} % of the port's link "
                     "for as long as XOFF holds",
                     pfc.pause_quanta, period, frame_bits,
                     100.0 * static_cast<double>(frame_bits) / static_cast<double>(period)));
}

void load_network(Section& s, NetworkConfig& n, bool bdp_ecn) {
  n.framing_bytes = s.boolean("preamble_ifg", true,
                              "count preamble+SFD (8 B) and inter-frame gap (12 B) on the wire")
                        ? 20
                        : 0;
  // Read (and recorded) only when given: the effective scenario then says the loss once.
  const bool has_loss_probability = s.has("loss_probability");
  const double loss_probability =
      has_loss_probability || s.describing()
          ? s.real("loss_probability", 0.0, 0.0, 1.0,
                   "random loss probability per packet per link (PFC frames exempt); the same "
                   "as network.loss.probability")
          : 0.0;
  n.nic_fifo =
      s.choice("nic_arbiter", "ring", {"ring", "fifo"},
               "how a NIC takes turns between its active queue pairs / PDCs, a packet each: "
               "ring = a source that becomes active joins before the ring's first member, "
               "wherever the turn is (fabsim's rule until 2026-11); fifo = it joins behind "
               "every waiting source, as in deficit round robin's active list and uet-htsim's "
               "NIC") == "fifo";
  n.ber = s.real("ber", 0.0, 0.0, 0.5,
                 "pre-FEC bit error rate of every link (docs/FAULTS.md; seed 002 §4: ~1e-4 "
                 "for 800G PAM4)");
  n.fec = s.choice("fec", "rs544", {"rs544", "none"},
                   "rs544: RS(544,514) KP4, corrects 15 10-bit symbols per codeword; none: any "
                   "bit error loses the frame") == "none"
              ? Fec::kNone
              : Fec::kRs544;
  auto b = s.table("buffer", "shared packet buffer of every switch");
  n.sw.buffer.size = b.bytes("size", n.sw.buffer.size, Bytes(1024), kMaxBytes,
                             "shared buffer per switch (Trident3-class 3.2 Tb/s: 32 MiB)");
  n.sw.buffer.reserve = b.bytes("reserve", n.sw.buffer.reserve, Bytes(0), kMaxBytes,
                                "reserved bytes per (ingress port, lossless class)");
  n.sw.buffer.egress_alpha = b.real("egress_alpha", n.sw.buffer.egress_alpha, 1.0 / 1024, 1024,
                                    "dynamic-threshold alpha of lossy egress queues");
  b.finish();
  auto p = s.table("pfc", "priority flow control (IEEE 802.1Qbb), REFERENCE.md §1.3");
  load_pfc(p, n.sw.pfc);
  check_pause_quanta(p, n);
  p.finish();
  auto e = s.table("ecn", "RED/ECN marking at egress dequeue, REFERENCE.md §1.4");
  n.sw.ecn.enabled = e.boolean("enabled", n.sw.ecn.enabled, "mark CE on ECT packets");
  // Thresholds: absolute (kmin, kmax) or fractions of one BDP (kmin_bdp, kmax_bdp), the latter
  // by default with a transport whose switches use the UE defaults (REFERENCE.md §4.7), unless
  // kmin or kmax is given. Only the form in use is read (and recorded).
  const bool given = e.has("kmin") || e.has("kmax");
  const bool bdp_default = bdp_ecn && !given;
  const char* bdp_doc =
      "with transport.kind = \"uet\" unless kmin or kmax is given: the UE switch default, "
      "REFERENCE.md §4.7";
  n.sw.ecn.kmin_bdp =
      e.real("kmin_bdp", bdp_default ? 0.2 : 0.0, 0.0, 1000.0,
             fmt::format("> 0: kmin is this fraction of one BDP (NIC rate x the fabric's longest "
                         "unloaded round trip) in whole frames, rounded up, as uet-htsim (0 = "
                         "kmin; 0.2 {})",
                         bdp_doc));
  // kmin_bdp = 0 given with UET asks for the absolute form: kmax_bdp's default follows it.
  n.sw.ecn.kmax_bdp =
      e.real("kmax_bdp", bdp_default && n.sw.ecn.kmin_bdp > 0 ? 0.8 : 0.0, 0.0, 1000.0,
             fmt::format("> 0: kmax is this fraction of one BDP, as kmin_bdp (0 = "
                         "kmax; 0.8 {})",
                         bdp_doc));
  const bool fractions = n.sw.ecn.kmin_bdp > 0 || n.sw.ecn.kmax_bdp > 0;
  if (e.describing() || !fractions) {
    n.sw.ecn.kmin = e.bytes("kmin", n.sw.ecn.kmin, Bytes(0), kMaxBytes, "queue with no marking");
    n.sw.ecn.kmax = e.bytes("kmax", n.sw.ecn.kmax, Bytes(0), kMaxBytes, "queue marked with pmax");
  }
  n.sw.ecn.pmax = e.real("pmax", bdp_ecn ? 1.0 : n.sw.ecn.pmax, 0.0, 1.0,
                         "marking probability at kmax (1 with transport.kind = \"uet\", "
                         "REFERENCE.md §4.7)");
  if (!e.describing() && fractions) {
    if (given) {
      e.fail(e.has("kmin") ? "kmin" : "kmax",
             "no absolute threshold with network.ecn.kmin_bdp or kmax_bdp (one form or the "
             "other)");
    }
    if (n.sw.ecn.kmin_bdp <= 0 || n.sw.ecn.kmax_bdp <= n.sw.ecn.kmin_bdp) {
      e.fail("kmax_bdp", fmt::format("a fraction above network.ecn.kmin_bdp = {} (both given, "
                                     "the upper above the lower)",
                                     n.sw.ecn.kmin_bdp));
    }
  }
  n.sw.ecn.reference_rate = e.rate("reference_rate", n.sw.ecn.reference_rate,
                                   "> 0: kmin and kmax are for a port of this rate and scale "
                                   "with each port's rate (HPCC ns-3 K maps; absolute kmin and "
                                   "kmax only)",
                                   "the same for every port");
  if (!e.describing() && fractions && n.sw.ecn.reference_rate.bps() > 0) {
    e.fail("reference_rate",
           "0 with network.ecn.kmin_bdp / kmax_bdp (fractions of the BDP at the NIC's rate); to "
           "scale thresholds by port rate, give absolute kmin and kmax");
  }
  n.sw.ecn.at_departure =
      e.choice("mark_at", n.sw.ecn.at_departure ? "departure" : "dequeue", {"dequeue", "departure"},
               "where the rule reads the queue behind the packet: dequeue = when the port starts "
               "sending it; departure = when its last bit has left, counting what arrived "
               "meanwhile (uet-htsim's queues)") == "departure";
  n.sw.ecn.host_ports = e.boolean("host_ports", n.sw.ecn.host_ports,
                                  "ToR ports towards hosts mark as well (false with UET "
                                  "receiver credit, as the UE spec advises)");
  if (!e.describing() && !fractions && n.sw.ecn.kmax <= n.sw.ecn.kmin) {
    e.fail("kmax", fmt::format("a size above network.ecn.kmin = {}", to_string(n.sw.ecn.kmin)));
  }
  e.finish();
  auto t = s.table("trim", "packet trimming at switch queues (Ultra Ethernet, REFERENCE.md §4.4)");
  n.trim.enabled = t.boolean("enabled", n.trim.enabled,
                             "cut a data packet that would exceed the threshold to its header "
                             "and forward the header at strict priority, instead of dropping");
  n.trim.threshold = t.bytes("threshold", n.trim.threshold, Bytes(0), kMaxBytes,
                             "queue bytes above which data is trimmed (0 = one BDP: NIC rate x "
                             "the fabric's longest unloaded round trip, in whole frames)");
  n.trim.last_hop_factor = t.real("last_hop_factor", n.trim.last_hop_factor, 0.1, 100.0,
                                  "threshold multiplier on ToR ports towards hosts (UE spec: "
                                  "1.5; uet-htsim: 1.0)");
  n.trim.on_overflow = t.boolean("on_overflow", n.trim.on_overflow,
                                 "trim rather than drop when the shared buffer is full");
  n.trim.count_on_wire = t.boolean("count_on_wire", n.trim.count_on_wire,
                                   "count the frame being serialized in the queue (uet-htsim)");
  n.trim.random_victim = t.boolean("random_victim", n.trim.random_victim,
                                   "trim the arriving or the last queued packet with probability "
                                   "1/2 each (uet-htsim); false: always the arriving one");
  n.trim.size = t.bytes("size", n.trim.size, Bytes(0), Bytes(65535),
                        "frame bytes a trimmed packet keeps, at least 64 (0 = all of its headers; "
                        "uet-htsim 64 B; UE spec: at least 24 B past the IP header)");
  if (!t.describing() && n.trim.size > Bytes() && n.trim.size < Bytes(64)) {
    t.fail("size", "0 (all of the headers) or at least 64 B, the smallest Ethernet frame");
  }
  n.trim.reference_rate = t.rate("reference_rate", n.trim.reference_rate,
                                 "> 0: the threshold is for a port of this rate and scales with "
                                 "each port's rate as it is then (a degraded link trims at a "
                                 "smaller queue, as uet-htsim's failed links)",
                                 "the same for every port");
  n.trim.header_queue =
      t.bytes("header_queue", n.trim.header_queue, Bytes(0), kMaxBytes,
              "control-class bytes a port may hold before a header-only packet arriving (a "
              "trimmed header, an ACK, a NACK, a credit) is dropped "
              "(uet-htsim's header queue: 2 x its data queue; the UE spec's drop threshold for "
              "the trimmed class: one Plane_BDP) (0 = 2 x the port's trim threshold)");
  n.trim.share = t.real("share", n.trim.share, 0.001, 1.0,
                        "the largest share of a port's bytes that trimmed headers take while "
                        "data waits: 1 = none, strict priority as uet-htsim (its 100000:1 "
                        "weights); the UE spec caps the trimmed class with fair queueing at 0.5, "
                        "or WDRR at 0.25 (REFERENCE.md §4.4)");
  t.finish();
  auto in = s.table("int", "resolution of the in-band telemetry fields switches stamp (HPCC)");
  n.int_units.time =
      in.time("time_unit", n.int_units.time, "timestamp resolution (0 = exact; HPCC ns-3: 1ns)");
  n.int_units.tx_bytes = in.bytes("bytes_unit", n.int_units.tx_bytes, Bytes(0), Bytes(1 << 20),
                                  "resolution of the bytes-sent counter (0 = exact; HPCC ns-3: "
                                  "128B x INT_MULTI, 512B at 100G)");
  n.int_units.qlen = in.bytes("qlen_unit", n.int_units.qlen, Bytes(0), Bytes(1 << 20),
                              "resolution of the queue length (0 = exact; HPCC ns-3: 80B x "
                              "INT_MULTI, 320B at 100G)");
  in.finish();
  auto l = s.table("loss", "link loss model (docs/FAULTS.md \"Loss models\"); PFC frames exempt");
  load_loss(l, has_loss_probability, loss_probability, n);
  l.finish();
}

void load_output(Section& s, OutputConfig& o) {
  o.flows_csv = s.boolean("flows_csv", true, "write flows.csv (one row per flow)");
  o.trace = s.boolean("trace", false, "write trace.csv (per-packet events of traced flows)");
  o.trace_flows = s.integers("trace_flows", {}, 0, kMaxInt, "flows to trace (empty = all)");
  o.sample_interval = s.time("sample_interval", Time(),
                             "record queue depth and link utilisation every interval into "
                             "timeseries.csv (0 = off)");
  o.sample_ports = s.choice("sample_ports", "uplinks", {"uplinks", "downlinks", "all"},
                            "ports sampled: leaf uplinks, switch ports towards hosts, or all");
  o.misorder = s.boolean("misorder", false,
                         "measure misordered adjacent packets at the destination leaves "
                         "(before GSE reordering)");
  o.slowdown = s.boolean("slowdown", false,
                         "write slowdown.csv: FCT / ideal FCT by flow-size bucket (docs/MODEL.md "
                         "\"FCT slowdown\"); always on with workload.kind = \"cdf\"");
  o.slowdown_buckets = static_cast<int>(
      s.integer("slowdown_buckets", o.slowdown_buckets, 1, 1000,
                "flow-size buckets of equal flow count in slowdown.csv (20 = 5 % each, as HPCC)"));
}

void load_faults(Section& s, ScenarioConfig& c, std::vector<Section>& event_sections) {
  c.faults.reconverge_local = s.time("reconverge_local", Time::ms(1),
                                     "Ethernet fabric: the two switches at a changed cable "
                                     "update their ECMP groups after this [UNVERIFIED]");
  c.faults.reconverge = s.time("reconverge", Time::ms(50),
                               "Ethernet fabric: every other switch reroutes after this (BGP "
                               "withdrawal after BFD detection; docs/FAULTS.md) [UNVERIFIED]");
  auto list = s.tables("events", "[[faults.events]]: link, action, at (+ flap/ber fields)");
  const Registry<FaultKind>& kinds = registries().faults;
  if (s.describing()) {
    Section e = s.describe_child("events[i]");
    e.text("link", "leaf0-spine0",
           "cable \"<lower switch>-<upper switch>\" (\"#<k>\" for parallel links), e.g. "
           "leaf0-spine1, rail2-spine0, tor0_1-agg0_0, agg3_1-core2");
    e.choice("action", "down", kinds.names(), "what happens to the cable");
    e.time("at", Time(), "when");
    for (const FaultKind* k : kinds.kinds()) k->load(e);
    return;
  }
  for (auto& e : list) {
    FaultSpec f;
    f.link = e.text("link", "", "cable");
    f.kind = kinds.find(e.choice("action", "down", kinds.names(), "action"));
    f.at = e.time("at", Time(), "when");
    f.config = f.kind->load(e);
    e.finish();  // rejects keys that do not belong to the action
    c.faults.events.push_back(f);
    event_sections.push_back(std::move(e));
  }
}

// A table named after a kind of `reg` that the chosen kinds did not read holds that kind's
// keys: say so, rather than calling it an unknown key (e.g. [fabric.gse] left in a file run with
// fabric.kind = "ethernet", or [transport.dcqcn] with transport.kind = "datagram").
template <typename Kind>
void reject_unread_kind_tables(Section& s, const Registry<Kind>& reg, std::string_view family,
                               std::string_view chosen) {
  if (s.describing()) return;
  for (const Kind* k : reg.kinds()) {
    if (s.has(k->name()) && !s.was_read(k->name())) {
      s.fail(k->name(), fmt::format("no [{}.{}] table with {} (it holds the keys of {} \"{}\": "
                                    "remove it, or choose that kind)",
                                    s.path(), k->name(), chosen, family, k->name()));
    }
  }
}

// A fault's cable must exist in the topology: build it (without traffic) and look the names up.
void check_fault_cables(const ScenarioConfig& c, std::vector<Section>& events) {
  if (c.faults.events.empty()) return;
  Simulation sim(c.seed);
  Network net(sim);
  TopologyEnv env{c.network.sw, c.network.framing_bytes,
                  [](uint32_t id) { return std::make_unique<EcmpSelector>(id); }};
  const TopologyInfo topo = c.topology.kind->build(net, c.topology.config, env);
  for (size_t i = 0; i < c.faults.events.size(); ++i) {
    if (topo.find_cable(c.faults.events[i].link) < 0) {
      events[i].fail("link", fmt::format("a cable of this {} topology, such as {}",
                                         c.topology.name(), topo.example_cables()));
    }
  }
}

void check_sweep(Section& sweep, const ScenarioConfig& c) {
  const SweepUse use = c.workload.kind->sweep_use(c.workload.config);
  if (use.size && c.sweep.sizes.empty()) {
    sweep.fail("sizes", "a list of sizes: an op has bytes = \"$size\"");
  }
  if (!use.size && !c.sweep.sizes.empty()) {
    sweep.fail("sizes", "an op with bytes = \"$size\" to use them");
  }
  if (use.collective && c.sweep.collectives.empty()) {
    sweep.fail("collectives", "a list of collectives: an op has type = \"$collective\"");
  }
  if (!use.collective && !c.sweep.collectives.empty()) {
    sweep.fail("collectives", "an op with type = \"$collective\" to use them");
  }
}

// Flows and jobs that start at or after the stop time never run (issue 14: the run ended with
// nothing done and said nothing). If none starts before it, the run would simulate nothing: an
// error. If some do, the run is still meaningful for those (e.g. a short stop time to look at
// the start of a long schedule): a warning, and the run ends INCOMPLETE (exit 3).
void check_starts(Section& wl, const ScenarioConfig& c) {
  if (wl.describing()) return;
  const auto starts = c.workload.kind->starts(c.workload.config);
  size_t late = 0;
  const WorkloadStart* first = nullptr;
  for (const auto& s : starts) {
    if (s.at < c.stop_time) continue;
    ++late;
    if (first == nullptr) first = &s;
  }
  if (late == 0) return;
  if (late == starts.size()) {
    wl.fail(first->key,
            fmt::format("a start before simulation.stop_time = {}: every flow and job starts at "
                        "or after it ({} here), so nothing would run",
                        to_string(c.stop_time), to_string(first->at)));
  }
  wl.warn(first->key,
          fmt::format("starts at {}, at or after simulation.stop_time = {}: {} of {} flow or job "
                      "starts never come, and the run will end INCOMPLETE (exit 3)",
                      to_string(first->at), to_string(c.stop_time), late, starts.size()));
}

// A GSE container shorter than one data frame holds one packet per container (the overflow
// rule opens a new one for each packet, the cumulative rule skips ids): the run is well defined
// (as with a container of exactly one frame) but it is per-packet spraying with reordering, not
// GSE's containers of several packets, and a unit slip ("1000" for 1000 KB) is the likely
// cause. A warning (issue 14), not an error: the soak (tools/soak.py) and studies of one-packet
// containers run it on purpose. The GSE kind cannot check it itself: fabrics load before the
// transport, which sets the frame size.
void check_gse_container(Section& fabric, const ScenarioConfig& c) {
  if (fabric.describing() || !c.fabric.config.holds<GseConfig>()) return;
  const GseConfig& g = c.fabric.config.get<GseConfig>();
  const int64_t frame = c.network.sw.max_frame_bytes + g.header_bytes + c.network.framing_bytes;
  if (g.container_bytes < frame) {
    fabric.warn("gse.container",
                fmt::format("{} is shorter than one data frame of {} wire bytes (payload {} + "
                            "headers {} + GSE header {} + preamble and gap {}): every container "
                            "holds one packet, as with container = {}",
                            to_string(Bytes(g.container_bytes)), frame, c.transport.wire.payload,
                            c.network.sw.max_frame_bytes - c.transport.wire.payload, g.header_bytes,
                            c.network.framing_bytes, frame));
  }
}

// The family sections, in the order their keys may depend on each other: the topology's hosts
// and tiers feed the fabric, transport and workload checks.
void load_families(Section& top, ScenarioConfig& c, std::vector<Section>& fault_events) {
  const Registries& reg = registries();
  auto topo = top.table("topology", "the fabric's shape");
  static_cast<Choice<TopologyKind>&>(c.topology) =
      choose(topo, "kind", "leaf_spine", reg.topologies, "topology");
  c.topology.shape = c.topology.kind->shape(c.topology.config);
  // One host carries no traffic: every workload would have no flow (issue 14: it ran 0 flows
  // and exited 0). An error, since no key of any workload can make such a run mean anything.
  if (c.topology.hosts() < 2) {
    topo.fail("kind", fmt::format("a topology of at least 2 hosts (this {} has {}: a network of "
                                  "one host carries no traffic)",
                                  c.topology.name(), c.topology.hosts()));
  }
  topo.finish();

  // The switches' ECN defaults depend on the transport's kind, read (and checked) below.
  const TransportKind* tk = reg.transports.find(top.peek_text("transport", "kind"));
  auto net = top.table("network", "links and switches");
  load_network(net, c.network, tk != nullptr && tk->bdp_ecn_defaults());
  net.finish();

  auto routing = top.table("routing", "path selection of Ethernet switches");
  c.routing = choose(routing, "policy", "ecmp", reg.policies, "equal-cost path choice");
  routing.finish();
  auto fabric = top.table("fabric", "the fabric's forwarding model");
  c.fabric = choose(fabric, "kind", "ethernet", reg.fabrics, "forwarding model", c.topology.shape);
  reject_unread_kind_tables(fabric, reg.fabrics, "fabric",
                            fmt::format("fabric.kind = \"{}\"", c.fabric.name()));
  fabric.finish();
  auto faults = top.table("faults", "link failures, flaps and degradation (docs/FAULTS.md)");
  load_faults(faults, c, fault_events);
  faults.finish();

  auto tr = top.table("transport", "host transport");
  const std::string kind = tr.choice("kind", "datagram", reg.transports.names(), "transport");
  c.transport.kind = reg.transports.find(kind);
  c.transport.wire = load_wire(tr, &c.transport.tclass);
  // The trim threshold (0 = one BDP) and, with a reference rate, its scale at a port of the
  // NIC's rate (net/trim.cpp scales the installed threshold, auto or given, the same way).
  const auto& trim = c.network.trim;
  const double trim_scale = trim.reference_rate.bps() > 0
                                ? static_cast<double>(c.topology.shape.nic_rate.bps()) /
                                      static_cast<double>(trim.reference_rate.bps())
                                : 1.0;
  c.transport.config =
      c.transport.kind->load(tr, TransportEnv{c.topology.shape.nic_rate, c.transport.wire, &reg.ccs,
                                              trim.enabled, trim.threshold.count(), trim_scale});
  reject_unread_kind_tables(tr, reg.ccs, "congestion control",
                            fmt::format("transport.kind = \"{}\"", c.transport.name()));
  tr.finish();
  c.transport.wire.header_bytes =
      c.transport.kind->header_bytes(c.transport.config, c.transport.wire);
  // The effective scenario says the header the kind put on the wire (UET's own unless given),
  // so that giving it again runs the same.
  if (!tr.describing()) c.effective["transport"]["header_bytes"] = c.transport.wire.header_bytes;
  if (!tr.describing() && c.network.trim.enabled && !c.transport.kind->handles_trim()) {
    tr.fail("kind", fmt::format("a transport that recovers trimmed packets (\"uet\") with "
                                "network.trim.enabled = true; \"{}\" would take a trimmed "
                                "header for a packet",
                                c.transport.name()));
  }
  // HPCC compares each hop's INT record with the previous ACK's (ns-3's UpdateRateHp, per-flow
  // ECMP): records of two ports at one hop give a meaningless utilisation (a review measured
  // a 2 MB permutation's p50 at 1,503 us sprayed, 266 us without a CC).
  if (!tr.describing() && c.transport.kind->reads_int(c.transport.config) &&
      (c.routing.kind->per_packet() || c.fabric.kind->sprays())) {
    tr.fail("cc", fmt::format("a congestion control that reads no INT with {}: a flow's packets "
                              "take several paths, and HPCC's per-hop differences need one port "
                              "per hop (per-flow ECMP or flowlets)",
                              c.fabric.kind->sprays() ? "fabric.kind = \"gse\""
                                                      : "routing.policy = \"spray\""));
  }
  // Go-back-N, IRN and RLTP take reordering for loss: spraying a flow's packets over paths of
  // unequal queues makes them NACK and resend what arrived (a review measured 29 % of an IRN
  // permutation's packets resent with no drop). GSE restores order before the NIC.
  if (!tr.describing() && c.transport.kind->reordering_is_loss() && c.routing.kind->per_packet() &&
      !c.fabric.kind->sprays()) {
    tr.warn("kind", fmt::format("\"{}\" takes every out-of-order arrival for a loss (NACK and "
                                "resend); with routing.policy = \"spray\" expect spurious "
                                "retransmissions (per-flow ECMP or flowlets keep order; UET's RUD "
                                "tolerates reordering)",
                                c.transport.name()));
  }
  auto sec = top.table("security", "encryption cost (docs/SECURITY.md)");
  c.security = choose(sec, "kind", "none", reg.security, "encryption");
  c.transport.wire.header_bytes += c.security.kind->header_bytes(c.security.config);
  sec.finish();
  c.network.sw.max_frame_bytes = c.transport.wire.payload + c.transport.wire.header_bytes;

  auto wl = top.table("workload", "traffic");
  c.workload = choose(wl, "kind", "permutation", reg.workloads, "workload", c.topology.shape);
  check_starts(wl, c);
  wl.finish();
  check_gse_container(fabric, c);
}

ScenarioConfig parse(const toml::table* root, const std::string& file) {
  auto ctx = std::make_shared<ReaderContext>();
  ctx->file = file;
  ScenarioConfig c;
  c.file = file;
  Section top(ctx, root, "", &c.effective);
  c.name = top.text("name", "unnamed",
                    "scenario name (letters, digits, '.', '_', '+', '-'; it names result "
                    "directories)");
  const bool safe = !c.name.empty() && c.name.front() != '.' &&
                    std::all_of(c.name.begin(), c.name.end(), [](char ch) {
                      return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '.' ||
                             ch == '_' || ch == '+' || ch == '-';
                    });
  if (!safe) {
    top.fail("name", "a file-name-safe name: letters, digits, '.', '_', '+' and '-', not "
                     "starting with '.'");
  }
  c.description = top.text("description", "", "one-line description");
  auto sim = top.table("simulation", "run control");
  load_simulation(sim, c);
  sim.finish();
  std::vector<Section> fault_events;
  load_families(top, c, fault_events);
  auto sweep = top.table("sweep", "lists of cases, each an independent simulation");
  load_sweep(sweep, c.sweep);
  check_sweep(sweep, c);
  sweep.finish();
  auto out = top.table("output", "result files");
  load_output(out, c.output);
  out.finish();
  top.finish();
  check_fault_cables(c, fault_events);
  c.warnings = ctx->warnings;
  return c;
}

// One family's catalogue entry per kind: the kind's keys as its loader declares them.
template <typename Kind, typename... Env>
Catalogue::Family describe_family(const std::string& title, const std::string& section,
                                  const Registry<Kind>& reg, const Env&... env) {
  Catalogue::Family f{title, {}};
  for (const auto& k : reg.kinds()) {
    auto ctx = std::make_shared<ReaderContext>();
    ctx->describe = true;
    Section s(ctx, nullptr, section, nullptr);
    k->load(s, env...);
    f.kinds.push_back({std::string(k->name()), std::string(k->description()), ctx->docs});
  }
  return f;
}

}  // namespace

ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                             const uint64_t* seed_override) {
  if (!std::ifstream(path).good()) {
    throw ConfigError(fmt::format("{}: cannot open the scenario file", path));
  }
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(
        fmt::format("{}:{}: not valid TOML: {}", path, e.source().begin.line, e.description()));
  }
  for (const auto& o : overrides) apply_override(root, o, "--set");
  if (seed_override != nullptr) {
    apply_override(root, fmt::format("simulation.seed={}", *seed_override), "--seed");
  }
  ScenarioConfig c = parse(&root, path);
  // Each case of sweep.seeds runs with its own seed: a --seed would be ignored without a word.
  if (seed_override != nullptr && !c.sweep.seeds.empty()) {
    throw ConfigError(fmt::format(
        "{}: --seed {} would be ignored: the scenario runs every seed of sweep.seeds; set "
        "those instead (--set 'sweep.seeds=[{}]')",
        path, *seed_override, *seed_override));
  }
  return c;
}

ScenarioConfig load_scenario_text(const std::string& text, const std::string& name,
                                  const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(
        fmt::format("{}:{}: not valid TOML: {}", name, e.source().begin.line, e.description()));
  }
  for (const auto& o : overrides) apply_override(root, o, "--set");
  return parse(&root, name);
}

Catalogue describe_catalogue() {
  const Registries& reg = registries();
  Catalogue cat;
  const HostShape shape;
  cat.families.push_back(describe_family("topologies (topology.kind)", "topology", reg.topologies));
  cat.families.push_back(
      describe_family("path-selection policies (routing.policy)", "routing", reg.policies));
  cat.families.push_back(describe_family("fabrics (fabric.kind)", "fabric", reg.fabrics, shape));
  cat.families.push_back(describe_family("transports (transport.kind)", "transport", reg.transports,
                                         TransportEnv{Rate::gbps(100), WireConfig{}, &reg.ccs}));
  {
    // Each congestion control's keys live in its own table, [transport.<name>].
    Catalogue::Family f{"congestion controls (transport.cc)", {}};
    for (const CcKind* k : reg.ccs.kinds()) {
      auto ctx = std::make_shared<ReaderContext>();
      ctx->describe = true;
      Section s(ctx, nullptr, "transport." + std::string(k->name()), nullptr);
      k->load(s, Rate::gbps(100));
      f.kinds.push_back({std::string(k->name()), std::string(k->description()), ctx->docs});
    }
    cat.families.push_back(std::move(f));
  }
  cat.families.push_back(
      describe_family("workloads (workload.kind)", "workload", reg.workloads, shape));
  cat.families.push_back(describe_family("security (security.kind)", "security", reg.security));
  cat.families.push_back(
      describe_family("fault actions (faults.events[i].action)", "faults.events[i]", reg.faults));
  auto ctx = std::make_shared<ReaderContext>();
  ctx->describe = true;
  Section s(ctx, nullptr, "", nullptr);
  ScenarioConfig c;
  // Each family's kind key, with its registered names.
  s.table("topology", "the fabric's shape")
      .choice("kind", "leaf_spine", reg.topologies.names(), "topology");
  s.table("routing", "path selection")
      .choice("policy", "ecmp", reg.policies.names(), "path choice");
  s.table("fabric", "forwarding model").choice("kind", "ethernet", reg.fabrics.names(), "fabric");
  s.table("transport", "host transport")
      .choice("kind", "datagram", reg.transports.names(), "transport");
  s.table("workload", "traffic").choice("kind", "permutation", reg.workloads.names(), "workload");
  s.table("security", "encryption cost").choice("kind", "none", reg.security.names(), "security");
  auto sim = s.table("simulation", "run control");
  load_simulation(sim, c);
  auto net = s.table("network", "links and switches");
  load_network(net, c.network, false);
  {
    auto tr = s.table("transport", "host transport (every kind)");
    load_wire(tr, &c.transport.tclass);
  }
  auto out = s.table("output", "result files");
  load_output(out, c.output);
  auto sw = s.table("sweep", "lists of cases, each an independent simulation");
  load_sweep(sw, c.sweep);
  auto faults = s.table("faults", "link failures, flaps and degradation (docs/FAULTS.md)");
  std::vector<Section> events;
  load_faults(faults, c, events);
  cat.common = ctx->docs;
  return cat;
}

ScenarioConfig instantiate(const ScenarioConfig& base, const Collective* collective,
                           const int64_t* size, const uint64_t* seed) {
  ScenarioConfig c = base;
  c.sweep = SweepConfig{};
  c.workload.kind->instantiate(c.workload.config, collective, size);
  if (seed != nullptr) {
    c.seed = *seed;
    c.effective["simulation"]["seed"] = *seed;
  }
  c.effective["case"] = nlohmann::ordered_json::object();
  if (collective != nullptr) c.effective["case"]["collective"] = collective_name(*collective);
  if (size != nullptr) c.effective["case"]["size"] = *size;
  return c;
}

}  // namespace fabsim
