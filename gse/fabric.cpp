// The GSE fabric kind: keys and installation; see fabric.h.
#include "gse/fabric.h"

#include <algorithm>  // max
#include <charconv>   // from_chars (grant weights)
#include <cmath>      // isfinite
#include <limits>     // bounds

namespace fabsim {
namespace {

const Bytes kMaxBytes = Bytes(std::numeric_limits<int64_t>::max() / 16);

// Containers and their path (seeds 000 §3.3, 002 §2.2.1).
void load_containers(Section& g, GseConfig& c) {
  c.mode = g.choice("mode", "n2n", {"n2n", "e2e"},
                    "n2n: RoCE NICs, the leaf is the GSP; e2e: the NIC is the GSP and the "
                    "leaf a GSF pinning each container to one uplink") == "e2e"
               ? GseMode::kE2E
               : GseMode::kN2N;
  c.header_bytes = g.integer("header_bytes", c.header_bytes, 0, 256,
                             "GSE header bytes on the wire [UNVERIFIED]");
  // The header numbers a container's packets in 16 bits: at most 65,535 packets of at least
  // 64 bytes each (a longer container's numbers would wrap and hide losses).
  c.container_bytes =
      g.bytes("container", Bytes(c.container_bytes), Bytes(64), Bytes(int64_t{65535} * 64),
              "container length in wire bytes (seed 002: 16 KB; at most 65,535 "
              "minimum frames, the header's 16-bit packet number)")
          .count();
  c.rule = g.choice("container_rule", "cumulative", {"cumulative", "overflow"},
                    "cumulative: id = bytes before / length (seed 000); overflow: a packet "
                    "that does not fit opens the next (seed 002)") == "overflow"
               ? ContainerRule::kOverflow
               : ContainerRule::kCumulative;
  const auto path = g.choice("path", "index", {"index", "least_queued", "weighted", "adaptive"},
                             "uplink per container: container id mod uplinks (seed 000), the "
                             "least queued local uplink, weighted round robin by uplink rate, or "
                             "adaptive: local queue + the GSF's published downlink backlog");
  c.path = path == "least_queued" ? ContainerPath::kLeastQueued
           : path == "weighted"   ? ContainerPath::kWeighted
           : path == "adaptive"   ? ContainerPath::kAdaptive
                                  : ContainerPath::kIndex;
}

// DGSQ: request/grant and the VOQs (docs/gse.md "Data plane II").
void load_dgsq(Section& g, GseConfig& c) {
  c.dgsq = g.boolean("dgsq", c.dgsq,
                     "DGSQ: per-destination VOQs at the source GSP that send only granted "
                     "bytes (GSE-N2N; docs/gse.md)");
  c.grant_quantum = g.bytes("grant_quantum", Bytes(c.grant_quantum), Bytes(64), Bytes(1 << 30),
                            "bytes per grant, paced at the egress port's rate")
                        .count();
  c.grant_rate = g.real("grant_rate", c.grant_rate, 0.01, 1.0,
                        "share of an egress port's rate its grants may use at most");
  c.grant_gate = g.bytes("grant_gate", Bytes(c.grant_gate), Bytes(0), kMaxBytes,
                         "no grant while the egress port queues more than this (egress flow "
                         "control: the port's ACKs and CNPs take part of its rate); 0 = off "
                         "[choice]")
                     .count();
  c.source_gate = g.bytes("source_gate", Bytes(c.source_gate), Bytes(0), kMaxBytes,
                          "the source GSP moves granted packets from its VOQs to the uplinks "
                          "only while the usable uplinks queue at most this per link on "
                          "average (the traffic manager's uplink scheduler); what waits stays "
                          "in the VOQs, under voq_ecn and source-local PFC; 0 = off [choice]")
                      .count();
  c.transit_caps = g.boolean("transit_caps", c.transit_caps,
                             "grant remote sources no faster than the spine links into the "
                             "destination leaf carry (one budget: containers use all of "
                             "them)");
  c.transit_share = g.real("transit_share", c.transit_share, 0.01, 1.0,
                           "share of the spine links' rate remote grants may use (ACKs, CNPs, "
                           "requests and grants cross them too: about 2 % with RoCE) [choice]");
  c.request_retry = g.time("request_retry", c.request_retry,
                           "a VOQ owed grants that heard none for this long asks again with its "
                           "cumulative request and the grants it has seen, and the destination "
                           "repeats a grant that was lost; 0 = 10 request-grant loops "
                           "[UNVERIFIED: the seeds give no recovery]");
  c.voq_pool_queues = g.integer("voq_pool_queues", c.voq_pool_queues, 0, 1 << 24,
                                "VOQs a GSP can hold at once (then: shared, ungranted)");
  c.voq_pool_bytes = g.bytes("voq_pool_bytes", Bytes(c.voq_pool_bytes), Bytes(0),
                             Bytes(int64_t{1} << 40), "bytes all VOQs of a GSP can hold")
                         .count();
  {
    const auto w = g.strings("grant_weights", "grant weight per source GSP (leaf index), as "
                                              "numbers in strings; empty = round robin");
    for (const auto& x : w) {
      // The whole string must be a finite positive number ("nan", "inf" and "1x" are refused).
      double v = 0;
      const auto [end, ec] = std::from_chars(x.data(), x.data() + x.size(), v);
      if (ec != std::errc() || end != x.data() + x.size() || !std::isfinite(v) || v <= 0) {
        g.fail("grant_weights", "finite positive numbers, e.g. [\"3\", \"1\"]");
      }
      c.grant_weights.push_back(v);
    }
  }
  c.voq_ecn = g.boolean("voq_ecn", c.voq_ecn,
                        "RED/ECN marking (network.ecn) at VOQ dequeue on the VOQ's depth, so "
                        "DCQCN slows NICs whose traffic waits for grants (needed without "
                        "PFC: nothing else slows them) [choice]");
  c.voq_ecn_kmin = g.bytes("voq_ecn_kmin", Bytes(c.voq_ecn_kmin), Bytes(0), kMaxBytes,
                           "VOQ depth below which nothing is marked (above the request-grant "
                           "loop's own backlog) [UNVERIFIED]")
                       .count();
  c.voq_ecn_kmax = g.bytes("voq_ecn_kmax", Bytes(c.voq_ecn_kmax), Bytes(1), kMaxBytes,
                           "VOQ depth marked with network.ecn.pmax [UNVERIFIED]")
                       .count();
  c.gate_lookahead = g.boolean("gate_lookahead", c.gate_lookahead,
                               "the grant gate compares the queue the port will still hold one "
                               "request-grant loop later (the loop's delay from the topology: a "
                               "grant's and its data's way between the farthest ToRs) [choice]");
  if (!g.describing() && c.voq_ecn_kmax <= c.voq_ecn_kmin) {
    g.fail("voq_ecn_kmax", "a size above fabric.gse.voq_ecn_kmin");
  }
}

// Reordering, fault notice, the link monitor and back-pressure (docs/FAULTS.md).
void load_gse_faults(Section& g, GseConfig& c) {
  c.reorder_timeout =
      g.time("reorder_timeout", c.reorder_timeout,
             "give up on a container that does not complete; 0 = derived from the fabric: twice "
             "the round trip between the farthest ToRs, grown to twice the longest reordering "
             "wait seen, at most reorder_timeout_max [UNVERIFIED]");
  c.reorder_timeout_max = g.time("reorder_timeout_max", c.reorder_timeout_max,
                                 "the most a derived reorder_timeout grows to [UNVERIFIED]");
  if (!g.describing() && c.reorder_timeout_max.ps() <= 0)
    g.fail("reorder_timeout_max", "a positive duration");
  c.reorder_buffer =
      g.bytes("reorder_buffer", Bytes(c.reorder_buffer), Bytes(0), Bytes(int64_t{1} << 40),
              "bytes a destination's reorder stage may hold; when full it stops waiting and "
              "releases what it holds; 0 = as much as the switch's shared buffer admits (N2N), "
              "no limit at a NIC (E2E) [UNVERIFIED]")
          .count();
  c.detect = g.time("detect", c.detect,
                    "a device notices that its own link died (loss of signal) [UNVERIFIED]");
  c.notice_hop = g.time("notice_hop", c.notice_hop,
                        "physical-layer fault notice and back-pressure delay per hop "
                        "(seed 000: microseconds) [UNVERIFIED]");
  c.monitor_window = g.time("monitor_window", c.monitor_window,
                            "FEC error counting window of the link-quality monitor");
  c.ber_threshold = g.real("ber_threshold", c.ber_threshold, 1e-12, 0.5,
                           "declare a link failing above this estimated pre-FEC BER "
                           "(default: the BER KP4 FEC is specified for)");
  c.fault_flush = g.time("fault_flush", c.fault_flush,
                         "on a fault notice, wait at most this for missing containers (they "
                         "may be lost with the cable) [UNVERIFIED]");
  c.publish_interval = g.time("publish_interval", c.publish_interval,
                              "GSF downlink backlog publication period (path = "
                              "\"adaptive\") [UNVERIFIED]");
  if (!g.describing()) {
    if (c.monitor_window.ps() <= 0) g.fail("monitor_window", "a positive duration");
    if (c.publish_interval.ps() <= 0) g.fail("publish_interval", "a positive duration");
  }
}

// The `[fabric.gse]` keys; defaults are GseConfig's.
GseConfig load_gse(Section& g) {
  GseConfig c;
  c.enabled = true;
  load_containers(g, c);
  load_dgsq(g, c);
  load_gse_faults(g, c);
  if (!g.describing() && c.dgsq && c.mode != GseMode::kN2N) {
    g.fail("dgsq", "false with mode = \"e2e\" (DGSQ is modelled at the GSE-N2N leaf)");
  }
  return c;
}

class GseFabricKind final : public FabricKind {
 public:
  std::string_view name() const override { return "gse"; }
  bool sprays() const override { return true; }
  std::string_view description() const override {
    return "GSE (seeds 000 and 002): PKTC container spraying, container reordering, DGSQ "
           "request/grant, GSOS fault notice; keys under [fabric.gse] (docs/gse.md)";
  }
  KindConfig load(Section& s, const HostShape& hosts) const override {
    auto g = s.table("gse", "GSE parameters (docs/gse.md)");
    GseConfig c = load_gse(g);
    g.finish();
    if (!s.describing() && hosts.tiers < 2) {
      s.fail("kind", "\"ethernet\" on a single switch (GSE needs ToRs and a tier above)");
    }
    return KindConfig::of(c);
  }
  std::unique_ptr<FabricInstance> install(const KindConfig& cfg,
                                          const FabricEnv& env) const override {
    return std::make_unique<GseFabric>(cfg.get<GseConfig>(), env);
  }
};

// The product of the up-going fan-outs of the tiers below switch `sw`: container index digits
// already used by the choices made before a container reaches it (a regular Clos: every switch
// of a tier has the same number of uplinks).
uint64_t fanout_below(const TopologyInfo& topo, uint32_t sw) {
  uint64_t d = 1;
  for (int t = 1; t < topo.tier[sw]; ++t) {
    const auto below = topo.switches_in_tier(t);
    if (!below.empty()) d *= std::max<size_t>(1, topo.up_cables[below.front()].size());
  }
  return d;
}

// The delay from a grant leaving the destination ToR until the first bytes of its data arrive
// back there, between the farthest ToRs (2 x (tiers - 1) switch-to-switch links each way): the
// grant (a control frame) crosses each link, then the source sends a container whose first
// frame crosses each link store-and-forward. Links of one tier are taken as equal (a Clos).
// Each crossing is the link's own: propagation, link security's latency, and serialization with
// its framing, security bytes and channel-level PHYSec's capacity (Link::frame_time). The data
// frame is a 4,096 B payload with RoCE's 62 B of headers [choice: the transport is not known
// when the fabric is installed].
Time request_grant_loop(const TopologyInfo& topo, const GseConfig& cfg) {
  Time loop;
  for (int t = 1; t < topo.tiers; ++t) {
    const auto tier = topo.switches_in_tier(t);
    if (tier.empty() || topo.up_cables[tier.front()].empty()) continue;
    const Link& l = *topo.cables[topo.up_cables[tier.front()].front()].up;
    const Time hop = l.config().delay + l.config().extra_delay;
    const Time one_link_grant = hop + l.frame_time(64);
    const Time one_link_data = hop + l.frame_time(4096 + 62 + cfg.header_bytes);
    loop += (one_link_grant + one_link_data) * 2;  // up and down through this tier
  }
  return loop;
}

}  // namespace

// GSE-N2N: ToRs are GSPs (source selector, reorder stage, optional DGSQ), higher switches
// GSFs; GSE-E2E: ToRs too are GSFs and every NIC a GSP.
GseFabric::GseFabric(const GseConfig& cfg, const FabricEnv& env) : cfg_(cfg), net_(env.net) {
  const TopologyInfo& topo = env.topo;
  cfg_.grant_loop = request_grant_loop(topo, cfg_);
  if (cfg_.request_retry <= Time()) cfg_.request_retry = cfg_.grant_loop * 10;
  gsos_ = std::make_unique<Gsos>(env.sim, env.net, topo, cfg_);
  for (uint32_t sw_id : topo.tors) {
    Switch& sw = env.net.sw(sw_id);
    std::vector<bool> uplink(sw.port_count(), false);
    for (uint16_t p : topo.uplink_ports(sw_id)) uplink[p] = true;
    std::vector<bool> host(sw.port_count());
    for (size_t p = 0; p < host.size(); ++p) host[p] = !uplink[p];
    if (cfg_.mode == GseMode::kE2E) {
      // The ToR is a GSF and pins each container to one uplink.
      auto core = std::make_unique<GseCoreSelector>(env.switch_seed(sw.id()), 1);
      core->set_gsos(gsos_.get(), sw.id());
      sw.set_path_selector(std::move(core));
      continue;
    }
    auto src = std::make_unique<GseSourceSelector>(sw, cfg_, uplink, env.switch_seed(sw.id()),
                                                   env.framing_bytes);
    src->set_gsos(gsos_.get());
    sources_.push_back(src.get());
    sw.set_path_selector(std::move(src));
    sinks_.push_back(std::make_unique<SwitchSink>(sw));
    auto reorder = std::make_unique<GseReorder>(env.sim, *sinks_.back(), cfg_, host);
    reorders_.push_back(reorder.get());
    gsos_->add_reorder(sw.id(), reorder.get());
    sw.add_extension(std::move(reorder));
    if (!cfg_.dgsq) continue;
    sources_.back()->set_deferred(true);
    std::vector<int64_t> host_of_port(sw.port_count(), -1);
    for (size_t h = 0; h < topo.tor_of_host.size(); ++h) {
      if (topo.tor_switch_of_host(static_cast<uint32_t>(h)) == sw_id) {
        host_of_port[topo.host_port[h]] = static_cast<int64_t>(h);
      }
    }
    auto dgsq =
        std::make_unique<GseDgsq>(env.sim, sw, cfg_, sources_.back(), topo.uplink_ports(sw_id),
                                  host_of_port, env.framing_bytes);
    dgsq->set_gsos(gsos_.get());
    dgsqs_.push_back(dgsq.get());
    sw.add_extension(std::move(dgsq));
  }
  if (cfg_.mode == GseMode::kE2E) {
    for (size_t h = 0; h < env.net.host_count(); ++h) {
      auto nic = std::make_unique<GseNic>(env.sim, env.net.host(h), cfg_, env.framing_bytes);
      nics_.push_back(nic.get());
      // The NIC is the destination GSP: it stops waiting for containers a failed cable may
      // have taken one notice hop after its ToR learns of it.
      gsos_->add_reorder(topo.tor_switch_of_host(static_cast<uint32_t>(h)), &nic->reorder(),
                         cfg_.notice_hop);
      env.net.host(h).set_extension(std::move(nic));
    }
  }
  for (uint32_t s = 0; s < topo.switch_count(); ++s) {
    if (topo.tor_index[s] != kNotTor) continue;
    auto core = std::make_unique<GseCoreSelector>(env.switch_seed(s), fanout_below(topo, s));
    core->set_gsos(gsos_.get(), s);
    env.net.sw(s).set_path_selector(std::move(core));
  }
}

GseFabric::~GseFabric() = default;

void GseFabric::start() {
  gsos_->start(cfg_.path == ContainerPath::kAdaptive);
}

void GseFabric::add_stats(nlohmann::ordered_json& j, Time now) const {
  uint64_t containers = 0;
  for (const auto* s : sources_) containers += s->containers();
  std::vector<const GseReorder*> reorders(reorders_.begin(), reorders_.end());
  for (const auto* n : nics_) {
    containers += n->containers();
    reorders.push_back(&n->reorder());
  }
  GseReorder::Stats t;
  for (const auto* r : reorders) t.merge(r->stats());
  const auto span = static_cast<long double>(now.ps());
  const long double mean_bytes = span > 0 ? t.byte_time / span : 0;
  if (!dgsqs_.empty()) {
    GseDgsq::Stats d;
    for (const auto* q : dgsqs_) d.merge(q->stats());
    j["dgsq"] = {{"requests", d.requests},
                 {"grants", d.grants},
                 {"granted_bytes", d.granted_bytes},
                 {"fallback_packets", d.fallback_packets},
                 {"voqs_created", d.voqs_created},
                 {"peak_voqs_per_gsp", d.peak_voqs},
                 {"peak_voq_bytes_per_gsp", d.peak_voq_bytes},
                 {"hold_drops", d.hold_drops},
                 {"ecn_marks", d.ecn_marks},
                 {"source_waits", d.source_waits}};
    if (d.pool_overruns > 0) j["dgsq"]["pool_overruns"] = d.pool_overruns;  // a small pool
    if (d.request_refreshes > 0 || d.grant_repeats > 0) {  // requests or grants were lost
      j["dgsq"]["request_refreshes"] = d.request_refreshes;
      j["dgsq"]["grant_repeats"] = d.grant_repeats;
    }
  }
  const auto gsps = static_cast<long double>(std::max<size_t>(1, reorders.size()));
  j["gse"] = {{"mode", cfg_.mode == GseMode::kE2E ? "e2e" : "n2n"},
              {"containers", containers},
              {"reorder_packets", t.packets},
              {"reorder_held", t.held},
              {"reorder_timeouts", t.timeouts},
              {"reorder_gaps", t.gaps},
              {"reorder_overflows", t.overflows},
              {"reorder_flushed", t.flushed},
              {"reorder_timeout_us", t.timeout.us_f()},
              {"reorder_fault_flushes", t.flushes},
              {"reorder_late", t.late},
              {"reorder_dropped", t.dropped},
              {"reorder_held_at_end_bytes", t.held_bytes},
              {"reorder_peak_bytes", t.peak_bytes},
              {"reorder_peak_packets", t.peak_packets},
              {"reorder_mean_bytes_per_gsp", static_cast<double>(mean_bytes / gsps)}};
}

void GseFabric::add_rows(const nlohmann::ordered_json& stats,
                         std::vector<std::pair<std::string, std::string>>& rows) const {
  const auto& g = stats["gse"];
  rows.emplace_back("gse containers", std::to_string(g["containers"].get<uint64_t>()));
  rows.emplace_back("gse reorder held", std::to_string(g["reorder_held"].get<uint64_t>()));
  rows.emplace_back("gse reorder timeouts", std::to_string(g["reorder_timeouts"].get<uint64_t>()));
  rows.emplace_back("gse reorder gaps", std::to_string(g["reorder_gaps"].get<uint64_t>()));
  rows.emplace_back("gse reorder peak (B)", std::to_string(g["reorder_peak_bytes"].get<int64_t>()));
}

void GseFabric::add_fault_stats(nlohmann::ordered_json& j) const {
  const auto& g = gsos_->stats();
  j["gsos"] = {{"notices", g.notices},
               {"rate_notices", g.rate_notices},
               {"declared_failing", g.declared_failing},
               {"declared_recovered", g.declared_recovered},
               {"monitor_windows", g.monitor_windows},
               {"publications", g.publications}};
}

// When the last GSE device learned of the cable (the whole fabric knows from then on).
void GseFabric::add_cable_stats(nlohmann::ordered_json& entry, uint32_t cable, Time first) const {
  Time all;
  bool known = true;
  for (size_t s = 0; s < net_.switch_count(); ++s) {
    const Time t = gsos_->known_at(static_cast<uint32_t>(s), cable);
    if (t == Time::max()) {
      known = false;
    } else {
      all = std::max(all, t);
    }
  }
  entry["known_by_all_after_us"] = known ? (all - first).us_f() : -1.0;
}

std::unique_ptr<FabricKind> make_gse_fabric() {
  return std::make_unique<GseFabricKind>();
}

}  // namespace fabsim
