// Scenario assembly and execution; see runner.h.
#include "scenario/runner.h"

#include <chrono>  // wall time for the (non-JSON) speed figures

#include "lb/ecmp.h"
#include "gse/dgsq.h"
#include "lb/spray.h"
#include "net/meter.h"
#include "transport/datagram.h"
#include "transport/roce.h"

namespace fabsim {
namespace {

uint64_t switch_seed(uint64_t seed, uint32_t switch_id) {
  return splitmix64(seed ^ splitmix64(stream_id(StreamKind::kSwitch, switch_id)));
}

SelectorFactory make_selector_factory(const ScenarioConfig& cfg, const Simulation& sim) {
  const uint64_t seed = cfg.seed;
  const std::string policy = cfg.routing;
  const Time gap = cfg.flowlet_gap;
  return [seed, policy, gap, &sim](uint32_t switch_id) -> std::unique_ptr<PathSelector> {
    const uint64_t s = switch_seed(seed, switch_id);
    if (policy == "spray") return std::make_unique<SpraySelector>(s);
    if (policy == "flowlet") return std::make_unique<FlowletSelector>(sim, s, gap);
    return std::make_unique<EcmpSelector>(s);
  };
}

}  // namespace

Run::Run(const ScenarioConfig& cfg) : cfg_(cfg), sim_(cfg.seed), net_(sim_) {
  const auto sel = make_selector_factory(cfg_, sim_);
  const auto& n = cfg_.network;
  if (cfg_.topology.kind == "single_switch") {
    topo_ = build_single_switch(net_, cfg_.topology.single_switch, n.sw, n.framing_bytes,
                                n.loss_probability, sel);
  } else {
    topo_ = build_leaf_spine(net_, cfg_.topology.leaf_spine, n.sw, n.framing_bytes,
                             n.loss_probability, sel);
  }
  for (const auto& link : net_.links()) {
    link->set_fec(n.fec);
    link->set_ber(n.ber);
  }
  apply_security();
  install_fabric();
  if (!cfg_.faults.events.empty()) {
    faults_ = std::make_unique<FaultInjector>(sim_, topo_, cfg_.faults.events);
    if (gsos_) {
      faults_->add_listener(gsos_.get());
    } else {
      reconvergence_ = std::make_unique<Reconvergence>(sim_, net_, topo_, cfg_.faults.reconverge_local,
                                                       cfg_.faults.reconverge);
      faults_->add_listener(reconvergence_.get());
    }
    faults_->start();
  }
  if (gsos_) gsos_->start(cfg_.gse.path == ContainerPath::kAdaptive);
  if (cfg_.transport.kind == "roce") {
    RoceConfig rc = cfg_.transport.roce;
    rc.wire = cfg_.transport.wire;
    transport_ = std::make_unique<RoceTransport>(net_, flows_, rc);
  } else {
    DatagramConfig dg = cfg_.transport.datagram;
    dg.wire = cfg_.transport.wire;
    transport_ = std::make_unique<DatagramTransport>(net_, flows_, dg);
  }
  driver_ = std::make_unique<FlowDriver>(sim_, flows_, *transport_);
  if (cfg_.output.sample_interval > Time()) {
    sampler_ = std::make_unique<PortSampler>(sim_, cfg_.output.sample_interval);
    const std::string& which = cfg_.output.sample_ports;
    for (size_t l = 0; l < topo_.leaf_switches.size(); ++l) {
      const Switch& sw = net_.sw(topo_.leaf_switches[l]);
      std::vector<bool> up(sw.port_count(), false);
      for (uint16_t p : topo_.leaf_uplinks[l]) up[p] = true;
      for (uint16_t p = 0; p < sw.port_count(); ++p) {
        if (which == "all" || (which == "uplinks") == up[p]) sampler_->add(sw.name(), sw.port(p));
      }
    }
    if (which == "all") {
      for (uint32_t s : topo_.spine_switches) {
        const Switch& sw = net_.sw(s);
        for (uint16_t p = 0; p < sw.port_count(); ++p) sampler_->add(sw.name(), sw.port(p));
      }
    }
    sampler_->start();
  }

  std::vector<FlowSpec> specs;
  const auto& w = cfg_.workload;
  if (w.kind == "jobs") {
    std::vector<JobSpec> jobs = w.jobs;
    for (auto& j : jobs) j.tclass = cfg_.transport.tclass;
    jobs_ = std::make_unique<JobRunner>(sim_, flows_, *transport_, std::move(jobs));
    flows_.set_observer(jobs_.get());
    jobs_->start();
    return;
  }
  if (w.kind == "permutation") {
    Rng rng = sim_.rng(stream_id(StreamKind::kWorkload, 0));
    specs = permutation_flows(topo_.hosts, w.bytes, w.start, rng);
  } else if (w.kind == "incast") {
    specs = incast_flows(topo_.hosts, w.senders, w.receiver, w.bytes, w.start);
  } else {
    specs = w.flows;
  }
  std::vector<bool> traced(specs.size(), cfg_.output.trace && cfg_.output.trace_flows.empty());
  if (cfg_.output.trace) {
    for (auto id : cfg_.output.trace_flows) {
      if (static_cast<size_t>(id) < traced.size()) traced[id] = true;
    }
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].tclass = cfg_.transport.tclass;
    const uint32_t id = flows_.add(specs[i]);
    flows_[id].trace = traced[i];
    driver_->schedule(id);
  }
  flows_.set_observer(this);
}

Run::~Run() = default;

// Link kinds act on every link (each hop encrypts and decrypts); NIC kinds on the links between
// NICs and leaves (the sender's NIC encrypts, the receiver's decrypts); their bytes are already
// in the transport's header (scenario loader).
void Run::apply_security() {
  const SecurityConfig& s = cfg_.security;
  if (s.kind == "none") return;
  if (s.per_link()) {
    const int64_t bytes = s.kind == "macsec" ? s.bytes : 0;
    for (const auto& link : net_.links()) link->add_security(s.latency, bytes, s.scale_num(), s.scale_den());
    return;
  }
  for (size_t h = 0; h < net_.host_count(); ++h) {
    net_.host(h).port().link()->add_security(s.latency, 0, 1, 1);
    net_.sw(topo_.leaf_switches[topo_.leaf_of_host[h]]).port(topo_.host_port[h]).link()->add_security(s.latency, 0, 1, 1);
  }
}

// GSE roles (GSE-N2N: leaves are GSPs, spines GSFs) and the misordering meters at the leaves.
void Run::install_fabric() {
  const size_t leaves = topo_.leaf_switches.size();
  if (cfg_.fabric == "gse") gsos_ = std::make_unique<Gsos>(sim_, net_, topo_, cfg_.gse);
  for (size_t l = 0; l < leaves; ++l) {
    Switch& sw = net_.sw(topo_.leaf_switches[l]);
    std::vector<bool> uplink(sw.port_count(), false);
    for (uint16_t p : topo_.leaf_uplinks[l]) uplink[p] = true;
    std::vector<bool> host(sw.port_count());
    for (size_t p = 0; p < host.size(); ++p) host[p] = !uplink[p];
    if (cfg_.output.misorder) {
      auto meter = std::make_unique<MisorderMeter>(host);
      meters_.push_back(meter.get());
      sw.add_extension(std::move(meter));
    }
    if (cfg_.fabric == "gse" && cfg_.gse.mode == GseMode::kN2N) {
      auto src = std::make_unique<GseSourceSelector>(sw, cfg_.gse, uplink, switch_seed(cfg_.seed, sw.id()),
                                                     cfg_.network.framing_bytes);
      src->set_gsos(gsos_.get());
      gse_sources_.push_back(src.get());
      sw.set_path_selector(std::move(src));
      sinks_.push_back(std::make_unique<SwitchSink>(sw));
      auto reorder = std::make_unique<GseReorder>(sim_, *sinks_.back(), cfg_.gse, host);
      gse_reorders_.push_back(reorder.get());
      gsos_->add_reorder(sw.id(), reorder.get());
      sw.add_extension(std::move(reorder));
      if (cfg_.gse.dgsq) {
        gse_sources_.back()->set_deferred(true);
        std::vector<int64_t> host_of_port(sw.port_count(), -1);
        for (size_t h = 0; h < topo_.leaf_of_host.size(); ++h) {
          if (topo_.leaf_of_host[h] == l) host_of_port[topo_.host_port[h]] = static_cast<int64_t>(h);
        }
        auto dgsq = std::make_unique<GseDgsq>(sim_, sw, cfg_.gse, gse_sources_.back(),
                                              topo_.leaf_uplinks[l], host_of_port,
                                              cfg_.network.framing_bytes);
        dgsq->set_gsos(gsos_.get());
        gse_dgsqs_.push_back(dgsq.get());
        sw.add_extension(std::move(dgsq));
      }
    } else if (cfg_.fabric == "gse") {
      // GSE-E2E: the leaf is a GSF and pins each container to one uplink.
      auto core = std::make_unique<GseCoreSelector>(switch_seed(cfg_.seed, sw.id()));
      core->set_gsos(gsos_.get(), sw.id());
      sw.set_path_selector(std::move(core));
    }
  }
  if (cfg_.fabric == "gse" && cfg_.gse.mode == GseMode::kE2E) {
    for (size_t h = 0; h < net_.host_count(); ++h) {
      auto nic = std::make_unique<GseNic>(sim_, net_.host(h), cfg_.gse, cfg_.network.framing_bytes);
      gse_nics_.push_back(nic.get());
      net_.host(h).set_extension(std::move(nic));
    }
  }
  if (cfg_.fabric == "gse") {
    for (uint32_t s : topo_.spine_switches) {
      auto core = std::make_unique<GseCoreSelector>(switch_seed(cfg_.seed, s));
      core->set_gsos(gsos_.get(), s);
      net_.sw(s).set_path_selector(std::move(core));
    }
  }
}

nlohmann::ordered_json Run::fabric_stats() const {
  nlohmann::ordered_json j = {{"kind", cfg_.fabric}, {"routing", cfg_.routing}};
  // PFC split: frames sent by switches towards NICs (source-local) and inside the fabric.
  uint64_t local_pfc = 0;
  uint64_t fabric_pfc = 0;
  int64_t peak_host_queue = 0;
  for (size_t l = 0; l < topo_.leaf_switches.size(); ++l) {
    const Switch& sw = net_.sw(topo_.leaf_switches[l]);
    std::vector<bool> up(sw.port_count(), false);
    for (uint16_t p : topo_.leaf_uplinks[l]) up[p] = true;
    for (uint16_t p = 0; p < sw.port_count(); ++p) {
      (up[p] ? fabric_pfc : local_pfc) += sw.port(p).counters().pfc_sent;
      if (!up[p]) peak_host_queue = std::max(peak_host_queue, sw.port(p).counters().peak_queue_bytes);
    }
  }
  for (uint32_t s : topo_.spine_switches) {
    const Switch& sw = net_.sw(s);
    for (uint16_t p = 0; p < sw.port_count(); ++p) fabric_pfc += sw.port(p).counters().pfc_sent;
  }
  j["pfc_to_hosts"] = local_pfc;
  j["pfc_in_fabric"] = fabric_pfc;
  j["peak_host_port_queue_bytes"] = peak_host_queue;
  if (!meters_.empty()) {
    uint64_t pairs = 0;
    uint64_t bad = 0;
    for (const auto* m : meters_) {
      pairs += m->pairs();
      bad += m->misordered();
    }
    j["misorder"] = {{"pairs", pairs},
                     {"misordered", bad},
                     {"fraction", pairs > 0 ? static_cast<double>(bad) / static_cast<double>(pairs) : 0.0}};
  }
  if (cfg_.fabric == "gse") {
    uint64_t containers = 0;
    for (const auto* s : gse_sources_) containers += s->containers();
    std::vector<const GseReorder*> reorders(gse_reorders_.begin(), gse_reorders_.end());
    for (const auto* n : gse_nics_) {
      containers += n->containers();
      reorders.push_back(&n->reorder());
    }
    GseReorder::Stats t;
    for (const auto* r : reorders) t.merge(r->stats());
    const auto span = static_cast<long double>(sim_.now().ps());
    const long double mean_bytes = span > 0 ? t.byte_time / span : 0;
    if (!gse_dgsqs_.empty()) {
      GseDgsq::Stats d;
      for (const auto* q : gse_dgsqs_) d.merge(q->stats());
      j["dgsq"] = {{"requests", d.requests},           {"grants", d.grants},
                   {"granted_bytes", d.granted_bytes}, {"fallback_packets", d.fallback_packets},
                   {"voqs_created", d.voqs_created},   {"peak_voqs_per_gsp", d.peak_voqs},
                   {"peak_voq_bytes_per_gsp", d.peak_voq_bytes}, {"hold_drops", d.hold_drops},
                   {"ecn_marks", d.ecn_marks}};
    }
    j["gse"] = {{"mode", cfg_.gse.mode == GseMode::kE2E ? "e2e" : "n2n"},
                {"containers", containers},
                {"reorder_packets", t.packets},
                {"reorder_held", t.held},
                {"reorder_timeouts", t.timeouts},
                {"reorder_fault_flushes", t.flushes},
                {"reorder_late", t.late},
                {"reorder_dropped", t.dropped},
                {"reorder_peak_bytes", t.peak_bytes},
                {"reorder_peak_packets", t.peak_packets},
                {"reorder_mean_bytes_per_gsp",
                 static_cast<double>(mean_bytes / static_cast<long double>(std::max<size_t>(1, reorders.size())))}};
  }
  return j;
}

void Run::on_flow_done(uint32_t /*flow*/, Time /*at*/) {
  if (flows_.completed() == flows_.size()) sim_.stop();
}

nlohmann::ordered_json Run::fault_stats() const {
  uint64_t fault_frames = 0;
  uint64_t fault_bytes = 0;
  uint64_t error_frames = 0;
  uint64_t error_bytes = 0;
  for (const auto& l : net_.links()) {
    const auto& f = l->fault_counters();
    fault_frames += f.fault_frames;
    fault_bytes += f.fault_bytes;
    error_frames += f.error_frames;
    error_bytes += f.error_bytes;
  }
  uint64_t congestion_frames = 0;
  for (size_t s = 0; s < net_.switch_count(); ++s) {
    const Switch& sw = net_.sw(s);
    fault_frames += sw.unroutable();
    fault_bytes += sw.unroutable_bytes();
    congestion_frames += sw.hold_drops();
    for (size_t p = 0; p < sw.port_count(); ++p) congestion_frames += sw.port(p).counters().drops;
  }
  uint64_t retx_bytes = 0;
  for (const auto& f : flows_.records()) retx_bytes += f.retransmitted_bytes;
  nlohmann::ordered_json j = {{"lost_to_faults_frames", fault_frames},
                              {"lost_to_faults_bytes", fault_bytes},
                              {"lost_to_errors_frames", error_frames},
                              {"lost_to_errors_bytes", error_bytes},
                              {"congestion_drops_frames", congestion_frames},
                              {"retransmitted_bytes", retx_bytes}};
  if (faults_) {
    nlohmann::ordered_json cables = nlohmann::ordered_json::array();
    const auto& first = faults_->first_fault();
    for (size_t c = 0; c < first.size(); ++c) {
      if (first[c] == Time::max()) continue;
      const Cable& cab = topo_.cables[c];
      const Time last = std::max(cab.up->fault_counters().last_data_tx, cab.down->fault_counters().last_data_tx);
      nlohmann::ordered_json e = {{"link", cab.name(topo_.links_per_spine > 1)},
                                  {"first_fault_us", first[c].us_f()},
                                  {"last_use_after_fault_us", last > first[c] ? (last - first[c]).us_f() : 0.0},
                                  {"alive_at_end", cab.alive()},
                                  {"lost_frames", cab.up->fault_counters().fault_frames +
                                                      cab.down->fault_counters().fault_frames +
                                                      cab.up->fault_counters().error_frames +
                                                      cab.down->fault_counters().error_frames}};
      if (gsos_) {
        // When the last GSE device learned (the whole fabric knows from then on).
        Time all;
        bool known = true;
        for (size_t s = 0; s < net_.switch_count(); ++s) {
          const Time t = gsos_->known_at(static_cast<uint32_t>(s), static_cast<uint32_t>(c));
          if (t == Time::max()) known = false;
          else all = std::max(all, t);
        }
        e["known_by_all_after_us"] = known ? (all - first[c]).us_f() : -1.0;
      }
      cables.push_back(e);
    }
    j["cables"] = cables;
    j["changes"] = faults_->changes().size();
    if (reconvergence_) j["route_recomputations"] = reconvergence_->recomputations();
  }
  if (gsos_) {
    const auto& g = gsos_->stats();
    j["gsos"] = {{"notices", g.notices},
                 {"declared_failing", g.declared_failing},
                 {"declared_recovered", g.declared_recovered},
                 {"monitor_windows", g.monitor_windows},
                 {"publications", g.publications}};
  }
  return j;
}

RunResult Run::execute(ProgressHook* hook, uint64_t hook_interval) {
  const auto wall0 = std::chrono::steady_clock::now();
  if (hook != nullptr) sim_.set_progress_hook(hook, hook_interval);
  if (!flows_.records().empty() || (jobs_ && !jobs_->all_done())) sim_.run(cfg_.stop_time);
  const auto wall1 = std::chrono::steady_clock::now();

  RunResult r;
  r.name = cfg_.name;
  r.seed = cfg_.seed;
  r.scenario = cfg_.effective;
  r.topology_kind = topo_.kind;
  r.hosts = topo_.hosts;
  r.leaves = topo_.leaves;
  r.spines = topo_.spines;
  r.speedup = topo_.speedup;
  r.end_time = sim_.now();
  r.events = sim_.events();
  r.flows.assign(flows_.records().begin(), flows_.records().end());
  r.trace = flows_.trace_events();
  r.all_done = flows_.completed() == flows_.size() && (!jobs_ || jobs_->all_done());
  if (jobs_) r.jobs = jobs_->results();
  if (sampler_) {
    for (const auto& s : sampler_->series()) r.series.push_back({s.node, s.port, s.rate});
    r.samples = sampler_->samples();
    r.sample_interval = sampler_->interval();
  }
  r.wall_seconds = std::chrono::duration<double>(wall1 - wall0).count();
  r.transport_kind = cfg_.transport.kind;
  r.fabric = fabric_stats();
  r.fabric["faults"] = fault_stats();
  r.transport_counters = transport_->counters();

  net_.finish();
  transport_->finish();
  auto add_port = [&r](const std::string& node, const EgressPort& p, bool host) {
    const auto& c = p.counters();
    Time paused;
    for (auto t : c.paused_time) paused += t;
    r.totals.drops += c.drops;
    r.totals.ecn_marks += c.ecn_marks;
    r.totals.pfc_frames += c.pfc_sent;
    r.totals.pause_time += paused;
    if (host) r.totals.host_pause_time += paused;
    if (c.drops > 0 || c.ecn_marks > 0 || c.pfc_sent > 0 || paused > Time()) {
      r.ports.push_back({node, p.index(), c.tx_bytes, c.drops, c.ecn_marks, c.pfc_sent, paused});
    }
  };
  for (size_t h = 0; h < net_.host_count(); ++h) {
    add_port(net_.host(h).name(), net_.host(h).port(), true);
    r.totals.data_packets_delivered += net_.host(h).counters().rx_data_packets;
  }
  for (size_t s = 0; s < net_.switch_count(); ++s) {
    for (size_t p = 0; p < net_.sw(s).port_count(); ++p) {
      add_port(net_.sw(s).name(), net_.sw(s).port(p), false);
    }
  }
  for (const auto& l : net_.links()) r.totals.link_losses += l->lost();
  r.packets_live_at_end = sim_.pool().live();
  return r;
}

RunResult run_scenario(const ScenarioConfig& cfg, ProgressHook* hook) {
  Run run(cfg);
  return run.execute(hook);
}

}  // namespace fabsim
