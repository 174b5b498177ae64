// Scenario assembly and execution; see runner.h.
#include "scenario/runner.h"

#include <algorithm>  // stable_sort (flows by source for the ideal FCTs)
#include <bit>        // popcount (lossless classes)
#include <chrono>     // wall time for the (non-JSON) speed figures
#include <cmath>      // ceil (BDP-relative ECN thresholds)

#include <fmt/format.h>

#include "net/ideal_fct.h"
#include "net/int_stamp.h"
#include "net/meter.h"
#include "net/round_trip.h"
#include "net/trim.h"
#include "scenario/resources.h"

namespace fabsim {

// The order of construction is the order of the events scheduled at time 0 (determinism):
// topology, link errors and loss models, security, fabric, faults, fabric timers, transport,
// sampler, workload.
Run::Run(ScenarioConfig cfg) : cfg_(std::move(cfg)), sim_(cfg_.seed), net_(sim_) {
  sim_.set_flow_prefetch(
      [](const void* table, uint32_t flow) {
        static_cast<const FlowTable*>(table)->prefetch(flow);
      },
      &flows_);
  const auto& n = cfg_.network;
  const FabricEnv fabric_env{sim_, net_, topo_, cfg_.seed, n.framing_bytes};
  const Choice<PathPolicyKind>& routing = cfg_.routing;
  const Simulation& sim = sim_;
  TopologyEnv env{n.sw, n.framing_bytes, [&routing, &fabric_env, &sim](uint32_t id) {
                    return routing.kind->make(routing.config, fabric_env.switch_seed(id), sim);
                  }};
  topo_ = cfg_.topology.kind->build(net_, cfg_.topology.config, env);
  check_memory_on_network();
  for (size_t h = 0; h < net_.host_count(); ++h) net_.host(h).set_fifo(n.nic_fifo);
  for (const auto& link : net_.links()) {
    link->set_fec(n.fec);
    link->set_ber(n.ber);
    if (in_scope(n.loss_links, link->role())) link->set_loss(n.loss);
  }
  cfg_.security.kind->apply(cfg_.security.config, net_, topo_);
  // Security latency lengthens the links' flight: the PFC headroom is sized again.
  for (size_t s = 0; s < net_.switch_count(); ++s) net_.sw(s).finalize();
  install_meters();
  fabric_ = cfg_.fabric.kind->install(cfg_.fabric.config, fabric_env);
  install_faults();
  fabric_->start();
  transport_ = cfg_.transport.kind->build(net_, flows_, cfg_.transport.config, cfg_.transport.wire);
  if (!cfg_.network.sw.ecn.host_ports) disable_host_ecn();
  if (transport_->needs_int()) install_int();
  if (cfg_.network.sw.ecn.kmin_bdp > 0 && net_.host_count() > 0) install_bdp_ecn();
  if (cfg_.network.trim.enabled) install_trim();
  driver_ = std::make_unique<FlowDriver>(sim_, flows_, *transport_);
  install_sampler();
  start_workload();
  check_buffers();
  for (const std::string& w : sim_.warnings()) warnings_.push_back(cfg_.file + ": " + w);
}

// A switch whose PFC headroom takes its whole buffer (many ports, long or fast links, a small
// buffer): a lossy class's admission subtracts the headroom from the buffer, so lossy traffic
// finds no room at all. With the dynamic threshold, headroom and reserves that take it all leave
// the free buffer the XOFF threshold scales at 0, so every lossless packet past the reserve
// pauses its sender. (A static threshold does not look at the buffer size: lossless traffic
// then runs as with a larger buffer.) The model runs either (each port still gets its
// headroom), but the buffer it holds can exceed network.buffer.size. A warning: the soak and
// studies of PFC pathologies run it on purpose.
void Run::check_buffers() {
  const PfcConfig& pfc = cfg_.network.sw.pfc;
  if (!pfc.enabled) return;
  for (size_t i = 0; i < net_.switch_count(); ++i) {
    const Switch& sw = net_.sw(i);
    const int64_t size = sw.buffer_bytes();
    const bool lossy_starves = sw.total_headroom() >= size;
    const bool lossless_pauses =
        pfc.mode == PfcThreshold::kDynamic && sw.total_headroom() + sw.total_reserve() >= size;
    if (!lossy_starves && !lossless_pauses) continue;
    const int classes = std::popcount(static_cast<unsigned>(pfc.lossless_mask));
    const char* what = lossy_starves && lossless_pauses
                           ? "lossy traffic finds no buffer, and every lossless packet past the "
                             "reserve pauses its sender"
                       : lossy_starves ? "lossy traffic finds no buffer"
                                       : "the dynamic XOFF threshold is 0, so every lossless "
                                         "packet past the reserve pauses its sender";
    sim_.warn(fmt::format(
        "key 'network.buffer.size': {} B, of which switch {} sets aside PFC headroom {} B ({} "
        "ports x {} lossless class{}, network.pfc.headroom) and reserve {} B: {}",
        size, sw.name(), sw.total_headroom(), sw.port_count(), classes, classes == 1 ? "" : "es",
        sw.total_reserve(), what));
    return;  // one switch names the problem
  }
}

Run::~Run() = default;

// The transport's CC reads in-band telemetry (HPCC): every switch port stamps a record on data
// packets of every data class at dequeue, after RED/ECN (REFERENCE.md §2.3).
void Run::install_int() {
  if (cfg_.network.sw.ecn.enabled && cfg_.network.sw.ecn.at_departure) {
    throw ConfigError(fmt::format(
        "{}: key 'network.ecn.mark_at': expected \"dequeue\" with a congestion control that "
        "reads INT (the INT records are stamped when a packet starts, on the queue RED also "
        "reads), got \"departure\"",
        cfg_.file));
  }
  for (size_t i = 0; i < net_.switch_count(); ++i) {
    Switch& sw = net_.sw(i);
    auto& hook = sw.adopt_hook(std::make_unique<IntStampHook>(sim_, cfg_.network.int_units));
    for (size_t port = 0; port < sw.port_count(); ++port) {
      for (uint8_t c = 0; c < kControlClass; ++c) {
        sw.add_dequeue_hook(static_cast<uint16_t>(port), c, &hook);
      }
    }
  }
}

std::pair<int64_t, int64_t> Run::bdp_in_frames() {
  const int64_t frame = cfg_.network.sw.max_frame_bytes;
  return {bdp_in_whole_frames(net_, frame, cfg_.transport.wire.control_bytes), frame};
}

// RED thresholds as fractions of one BDP (REFERENCE.md §4.7, §9.3.3: uet-htsim marks from
// ceil(0.2 x BDP) to ceil(0.8 x BDP) packets, BDP in whole packets): each rounded up to whole
// frames, for a port of the NIC's rate.
void Run::install_bdp_ecn() {
  const auto& e = cfg_.network.sw.ecn;
  const auto [bdp, frame] = bdp_in_frames();
  const auto frames = [&, bdp = bdp, frame = frame](double f) {
    return Bytes(static_cast<int64_t>(std::ceil(f * static_cast<double>(bdp / frame))) * frame);
  };
  ecn_thresholds_ = {frames(e.kmin_bdp), frames(e.kmax_bdp)};
  for (size_t i = 0; i < net_.switch_count(); ++i) {
    net_.sw(i).set_ecn_thresholds(ecn_thresholds_.first, ecn_thresholds_.second);
  }
}

// Packet trimming on every data-class queue of every switch (REFERENCE.md §4.4): the threshold
// is one BDP unless given, 1.5 times that on the last hop (ToR ports towards hosts).
void Run::install_trim() {
  const auto& t = cfg_.network.trim;
  Bytes threshold = t.threshold;
  if (threshold == Bytes() && net_.host_count() > 0) threshold = Bytes(bdp_in_frames().first);
  trim_threshold_ = threshold;
  for (size_t i = 0; i < net_.switch_count(); ++i) {
    Switch& sw = net_.sw(i);
    sw.set_trimmed_size(static_cast<uint32_t>(t.size.count()),
                        static_cast<uint32_t>(fabric_ ? fabric_->header_bytes() : 0));
    TrimHook::Config fabric{threshold,       t.on_overflow,    t.count_on_wire,
                            t.random_victim, t.reference_rate, t.header_queue};
    TrimHook::Config last = fabric;
    last.threshold =
        Bytes(static_cast<int64_t>(static_cast<double>(threshold.count()) * t.last_hop_factor));
    // Each hook draws its coin from its own stream (switch i, hook 0 or 1), apart from the
    // switch's own (kSwitch, i).
    const uint64_t stream = (uint64_t{1} << 40) | (2 * i);
    auto& up = sw.adopt_hook(
        std::make_unique<TrimHook>(fabric, sim_.rng(stream_id(StreamKind::kSwitch, stream))));
    auto& down = sw.adopt_hook(
        std::make_unique<TrimHook>(last, sim_.rng(stream_id(StreamKind::kSwitch, stream + 1))));
    for (size_t port = 0; port < sw.port_count(); ++port) {
      const auto p16 = static_cast<uint16_t>(port);
      AdmissionHook* h = host_port(static_cast<uint32_t>(i), p16) ? &down : &up;
      for (uint8_t c = 0; c < kControlClass; ++c) sw.set_admission_hook(p16, c, h);
      if (t.share < 1.0) sw.port(p16).set_trimmed_share(t.share);
    }
  }
}

// network.ecn.host_ports = false: the ToR ports towards hosts mark nothing.
void Run::disable_host_ecn() {
  for (size_t i = 0; i < net_.switch_count(); ++i) {
    Switch& sw = net_.sw(i);
    for (size_t port = 0; port < sw.port_count(); ++port) {
      const auto p16 = static_cast<uint16_t>(port);
      if (host_port(static_cast<uint32_t>(i), p16)) sw.disable_ecn(p16);
    }
  }
}

bool Run::host_port(uint32_t sw, uint16_t port) const {
  return topo_.tor_index[sw] != kNotTor && !topo_.is_uplink(sw, port);
}

// Misordering meters at the ToRs, ahead of any fabric stage on the same switch.
void Run::install_meters() {
  if (!cfg_.output.misorder) return;
  for (uint32_t t : topo_.tors) {
    Switch& sw = net_.sw(t);
    std::vector<bool> host(sw.port_count());
    for (uint16_t p = 0; p < sw.port_count(); ++p) host[p] = host_port(t, p);
    auto meter = std::make_unique<MisorderMeter>(host);
    meters_.push_back(meter.get());
    sw.add_extension(std::move(meter));
  }
}

// The fault schedule; the fabric hears it, or else the Ethernet control plane reconverges.
void Run::install_faults() {
  if (cfg_.faults.events.empty()) return;
  faults_ = std::make_unique<FaultInjector>(sim_, topo_, cfg_.faults.events);
  if (FaultListener* l = fabric_->fault_listener()) {
    faults_->add_listener(l);
  } else {
    reconvergence_ = std::make_unique<Reconvergence>(
        sim_, net_, topo_, cfg_.faults.reconverge_local, cfg_.faults.reconverge);
    faults_->add_listener(reconvergence_.get());
  }
  faults_->start();
}

// The resource guard again, now that the topology is built: the loader's estimate knew only
// its hosts; here switches, ports, links and sampled ports are counted (before the transport,
// the workload and the sampler allocate anything).
NetworkCounts Run::network_counts() const {
  NetworkCounts n;
  n.hosts = net_.host_count();
  n.switches = net_.switch_count();
  for (size_t s = 0; s < net_.switch_count(); ++s) n.switch_ports += net_.sw(s).port_count();
  n.links = net_.links().size();
  if (cfg_.output.sample_interval > Time()) n.sampled_ports = sampled_ports().size();
  return n;
}

void Run::check_memory_on_network() {
  const NetworkCounts n = network_counts();
  const MemoryEstimate est = estimate_memory(cfg_, &n);
  memory_estimate_ = est.total;
  check_memory(cfg_, est, cfg_.memory_limit);
}

std::vector<std::pair<uint32_t, uint16_t>> Run::sampled_ports() const {
  std::vector<std::pair<uint32_t, uint16_t>> out;
  const std::string& which = cfg_.output.sample_ports;
  const bool all = which == "all";
  for (uint32_t t : topo_.tors) {
    const Switch& sw = net_.sw(t);
    for (uint16_t p = 0; p < sw.port_count(); ++p) {
      if (all || (which == "uplinks") == topo_.is_uplink(t, p)) out.emplace_back(t, p);
    }
  }
  if (all) {
    for (uint32_t s = 0; s < topo_.switch_count(); ++s) {
      if (topo_.tor_index[s] != kNotTor) continue;
      for (uint16_t p = 0; p < net_.sw(s).port_count(); ++p) out.emplace_back(s, p);
    }
  }
  return out;
}

// Time series of the ToRs' uplinks, their host ports, or every switch port (ToRs first).
void Run::install_sampler() {
  if (cfg_.output.sample_interval <= Time()) return;
  const auto ports = sampled_ports();
  if (ports.empty()) {
    sim_.warn(fmt::format("key 'output.sample_interval': no switch port of this topology is "
                          "one of output.sample_ports = \"{}\", so no timeseries.csv is written "
                          "(\"all\" samples every switch port)",
                          cfg_.output.sample_ports));
    return;
  }
  sampler_ = std::make_unique<PortSampler>(sim_, cfg_.output.sample_interval);
  for (const auto& [s, p] : ports) sampler_->add(net_.sw(s).name(), net_.sw(s).port(p));
  sampler_->start();
}

void Run::start_workload() {
  Rng rng = sim_.rng(stream_id(StreamKind::kWorkload, 0));
  WorkloadPlan plan = cfg_.workload.kind->plan(cfg_.workload.config, topo_.hosts, rng);
  workload_summary_ = std::move(plan.summary);
  slowdown_in_summary_ = plan.slowdown;
  slowdown_ = plan.slowdown || cfg_.output.slowdown;
  if (cfg_.output.trace && (!plan.graphs.empty() || !plan.jobs.empty())) {
    sim_.warn(fmt::format("key 'output.trace': workload kind \"{}\" makes its flows as the run "
                          "goes, which are not traced; no trace.csv is written (trace a "
                          "workload of flows given up front: flows, permutation, incast, cdf)",
                          cfg_.workload.name()));
  }
  if (!plan.graphs.empty()) {
    for (auto& j : plan.graphs) j.tclass = cfg_.transport.tclass;
    graphs_ = std::make_unique<GraphRunner>(sim_, flows_, *transport_, std::move(plan.graphs));
    flows_.set_observer(graphs_.get());
    graphs_->start();
    return;
  }
  if (!plan.jobs.empty()) {
    for (auto& j : plan.jobs) j.tclass = cfg_.transport.tclass;
    jobs_ = std::make_unique<JobRunner>(sim_, flows_, *transport_, std::move(plan.jobs));
    flows_.set_observer(jobs_.get());
    jobs_->start();
    return;
  }
  std::vector<FlowSpec>& specs = plan.flows;
  std::vector<bool> traced(specs.size(), cfg_.output.trace && cfg_.output.trace_flows.empty());
  if (cfg_.output.trace) {
    std::string beyond;
    for (auto id : cfg_.output.trace_flows) {
      if (static_cast<size_t>(id) < traced.size()) {
        traced[id] = true;
      } else {
        beyond += fmt::format("{}{}", beyond.empty() ? "" : ", ", id);
      }
    }
    if (!beyond.empty()) {
      sim_.warn(fmt::format("key 'output.trace_flows': no flow {} (the workload has {} flows, "
                            "ids 0 to {}): not traced",
                            beyond, specs.size(), specs.empty() ? 0 : specs.size() - 1));
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

nlohmann::ordered_json Run::fabric_stats() const {
  nlohmann::ordered_json j = {{"kind", cfg_.fabric.name()}, {"routing", cfg_.routing.name()}};
  // PFC split: frames sent by ToRs towards NICs (source-local) and inside the fabric.
  uint64_t local_pfc = 0;
  uint64_t fabric_pfc = 0;
  int64_t peak_host_queue = 0;
  for (uint32_t s = 0; s < topo_.switch_count(); ++s) {
    const Switch& sw = net_.sw(s);
    for (uint16_t p = 0; p < sw.port_count(); ++p) {
      const bool host = host_port(s, p);
      (host ? local_pfc : fabric_pfc) += sw.port(p).counters().pfc_sent;
      if (host) peak_host_queue = std::max(peak_host_queue, sw.port(p).counters().peak_queue_bytes);
    }
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
    j["misorder"] = {
        {"pairs", pairs},
        {"misordered", bad},
        {"fraction", pairs > 0 ? static_cast<double>(bad) / static_cast<double>(pairs) : 0.0}};
  }
  fabric_->add_stats(j, sim_.now());
  return j;
}

// One breadth-first search per source host: the flows are visited grouped by source.
std::vector<Time> Run::ideal_fcts() const {
  const auto& records = flows_.records();
  const FrameShape shape{cfg_.transport.wire.payload, cfg_.transport.wire.header_bytes, 64};
  std::vector<size_t> order(records.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&records](size_t a, size_t b) {
    return records[a].spec.src < records[b].spec.src;
  });
  std::vector<Time> ideal(records.size());
  PathFinder paths(net_, shape.payload + shape.header);
  // The control legs the FCT includes go the data's way back (a read's request before the
  // data, a write's ACK after it).
  const CompletionLegs legs = transport_->completion_legs();
  for (const size_t i : order) {
    const FlowSpec& f = records[i].spec;
    ideal[i] = ideal_fct(paths.path(f.src, f.dst), f.bytes, shape);
    if (legs.request || legs.ack) {
      const Time leg = control_leg(paths.back(f.src, f.dst), legs.control_bytes);
      ideal[i] += leg * ((legs.request ? 1 : 0) + (legs.ack ? 1 : 0));
    }
  }
  return ideal;
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
  nlohmann::ordered_json j = {
      {"lost_to_faults_frames", fault_frames},        {"lost_to_faults_bytes", fault_bytes},
      {"lost_to_errors_frames", error_frames},        {"lost_to_errors_bytes", error_bytes},
      {"congestion_drops_frames", congestion_frames}, {"retransmitted_bytes", retx_bytes}};
  if (faults_) {
    nlohmann::ordered_json cables = nlohmann::ordered_json::array();
    const auto& first = faults_->first_fault();
    for (size_t c = 0; c < first.size(); ++c) {
      if (first[c] == Time::max()) continue;
      const Cable& cab = topo_.cables[c];
      const Time last =
          std::max(cab.up->fault_counters().last_data_tx, cab.down->fault_counters().last_data_tx);
      nlohmann::ordered_json e = {
          {"link", cab.name()},
          {"first_fault_us", first[c].us_f()},
          {"last_use_after_fault_us", last > first[c] ? (last - first[c]).us_f() : 0.0},
          {"alive_at_end", cab.alive()},
          {"lost_frames",
           cab.up->fault_counters().fault_frames + cab.down->fault_counters().fault_frames +
               cab.up->fault_counters().error_frames + cab.down->fault_counters().error_frames}};
      if (faults_->rate_changed(static_cast<uint32_t>(c))) {
        e["up_gbps_at_end"] = cab.up->config().rate.gbps_f();
        e["down_gbps_at_end"] = cab.down->config().rate.gbps_f();
      }
      fabric_->add_cable_stats(e, static_cast<uint32_t>(c), first[c]);
      cables.push_back(e);
    }
    j["cables"] = cables;
    j["changes"] = faults_->changes().size();
    if (reconvergence_) j["route_recomputations"] = reconvergence_->recomputations();
  }
  fabric_->add_fault_stats(j);
  return j;
}

namespace {
// Between two events every kStopCheckEvents: stops the simulation once the flag is set, and
// passes progress on to the caller's hook at its own interval.
class StopCheck : public ProgressHook {
 public:
  StopCheck(Simulation& sim, const StopFlag& flag, ProgressHook* hook, uint64_t interval)
      : sim_(sim), flag_(flag), hook_(hook), interval_(interval), next_(interval) {}
  void on_progress(Time now, uint64_t events) override {
    const int v = flag_.load(std::memory_order_relaxed);
    if (v != 0 && stopped_by_ == 0) {
      stopped_by_ = v;
      sim_.stop();
    }
    if (hook_ != nullptr && events >= next_) {
      hook_->on_progress(now, events);
      next_ = events + interval_;
    }
  }
  int stopped_by() const { return stopped_by_; }

 private:
  Simulation& sim_;
  const StopFlag& flag_;
  ProgressHook* hook_;
  uint64_t interval_;
  uint64_t next_;
  int stopped_by_ = 0;
};
}  // namespace

RunResult Run::execute(ProgressHook* hook, uint64_t hook_interval) {
  const auto wall0 = std::chrono::steady_clock::now();
  std::unique_ptr<StopCheck> check;
  if (stop_flag_ != nullptr) {
    check = std::make_unique<StopCheck>(sim_, *stop_flag_, hook, hook_interval);
    sim_.set_progress_hook(check.get(), std::min(hook_interval, kStopCheckEvents));
  } else if (hook != nullptr) {
    sim_.set_progress_hook(hook, hook_interval);
  }
  const bool work = !flows_.records().empty() || (jobs_ && !jobs_->all_done()) ||
                    (graphs_ && !graphs_->all_done());
  if (stop_flag_ != nullptr && stop_flag_->load() != 0) {
    interrupted_ = stop_flag_->load();  // asked to stop before it began
  } else if (work) {
    sim_.run(cfg_.stop_time);
    // Stopped by the flag, unless the run had just finished anyway.
    const bool done = flows_.completed() == flows_.size() && (!jobs_ || jobs_->all_done()) &&
                      (!graphs_ || graphs_->all_done());
    if (check && !done) interrupted_ = check->stopped_by();
    // Unfinished at the time limit: the network was simulated up to it (with nothing happening
    // after the last event), so the run ends there: goodput, JCTs of jobs not done and pause
    // times count the whole window. If nothing was left to happen at all (no packet, no timer
    // but periodic observers), the report says when the run went still.
    if (!done && interrupted_ == 0) {
      if (!sim_.foreground_pending()) stalled_at_ = sim_.now();
      sim_.advance_to(cfg_.stop_time);
    }
  }
  sim_.set_progress_hook(nullptr, 0);
  const auto wall1 = std::chrono::steady_clock::now();
  return collect(std::chrono::duration<double>(wall1 - wall0).count());
}

RunResult Run::collect(double wall_seconds) {
  RunResult r;
  r.name = cfg_.name;
  r.seed = cfg_.seed;
  r.scenario = std::move(cfg_.effective);  // collect runs once; 16k flows' keys are megabytes
  r.topology = topo_.summary();
  r.topology_line = topo_.describe();
  r.hosts = topo_.hosts;
  r.end_time = sim_.now();
  r.stalled_at = stalled_at_;
  // summary.json keeps every warning: the loader's (printed when the scenario was read) and
  // the run's.
  r.warnings = cfg_.warnings;
  r.warnings.insert(r.warnings.end(), warnings_.begin(), warnings_.end());
  r.events = sim_.events();
  r.flows.assign(flows_.records().begin(), flows_.records().end());
  r.trace = flows_.trace_events();
  r.all_done = flows_.completed() == flows_.size() && (!jobs_ || jobs_->all_done()) &&
               (!graphs_ || graphs_->all_done());
  if (jobs_) r.jobs = jobs_->results();
  if (graphs_) r.jobs = graphs_->results();
  r.workload = workload_summary_;
  if (slowdown_) r.ideal_fct = ideal_fcts();
  r.slowdown_buckets = cfg_.output.slowdown_buckets;
  r.slowdown_in_summary = slowdown_in_summary_;
  if (sampler_) {
    for (const auto& s : sampler_->series()) r.series.push_back({s.node, s.port, s.rate});
    r.samples = sampler_->samples();
    r.sample_interval = sampler_->interval();
  }
  r.wall_seconds = wall_seconds;
  r.transport_kind = cfg_.transport.name();
  r.fabric = fabric_stats();
  r.fabric["faults"] = fault_stats();
  fabric_->add_rows(r.fabric, r.fabric_rows);
  r.transport_counters = transport_->counters();
  r.transport_files = transport_->files();
  r.failed_senders = transport_->failed_senders();
  r.ledger = sim_.ledger().close(sim_.pool());  // before the network empties its queues

  net_.finish();
  transport_->finish();
  r.packets_live_at_end = sim_.pool().live();
  // A run that ended with no packet live gives the packets' memory to the report built next
  // (on a 1,024-host permutation the packets are 3.5 MB, the report's port rows 0.5 MB).
  sim_.pool().release_storage();
  auto add_port = [&r](const std::string& node, const EgressPort& p, bool host) {
    const auto& c = p.counters();
    Time paused;
    for (uint8_t cls = 0; cls < kNumClasses; ++cls) paused += p.paused_time(cls);
    r.totals.drops += c.drops;
    r.totals.ecn_marks += c.ecn_marks;
    r.totals.trims += c.trims;
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
  for (const auto& l : net_.links()) r.totals.link_losses += l->lost() + l->burst_lost();
  return r;
}

RunResult run_scenario(const ScenarioConfig& cfg, ProgressHook* hook) {
  Run run(cfg);
  return run.execute(hook);
}

}  // namespace fabsim
