// The `cdf` workload kind; see cdf.h.
#include "workload/cdf/cdf.h"

#include <fmt/format.h>  // messages

#include <algorithm>      // stable_sort
#include <cmath>          // log1p, llround
#include <filesystem>     // paths relative to the scenario file
#include <fstream>        // CDF files
#include <iterator>       // istreambuf_iterator
#include <limits>         // saturation
#include <unordered_map>  // flows per host pair

#include "core/assert.h"
#include "workload/cdf/shipped.h"  // generated from workload/cdf/*.txt (workload/CMakeLists.txt)
#include "workload/traffic.h"

namespace fabsim {

double CdfWorkloadConfig::mean_gap_ps() const {
  return 8.0 * mean_bytes() * 1e12 / (static_cast<double>(nic_rate.bps()) * load);
}

std::vector<FlowSpec> cdf_flows(const CdfWorkloadConfig& c, int hosts, Rng& rng) {
  std::vector<uint32_t> partner;
  if (c.pattern == CdfPattern::kPermutation) partner = derangement(hosts, rng);
  // One stream per host, so a host's arrivals do not depend on how many the others drew.
  const uint64_t seed = rng.next();
  const double gap = c.mean_gap_ps();
  const Time end = c.start + c.duration;
  std::vector<FlowSpec> out;
  for (int h = 0; h < hosts; ++h) {
    Rng r(seed, static_cast<uint64_t>(h));
    const auto src = static_cast<uint32_t>(h);
    Time t = c.start;
    for (;;) {
      // -ln(1 - U) x mean: exponential gaps (U in [0, 1), so the logarithm is finite).
      t += Time::ps(std::llround(-std::log1p(-r.uniform()) * gap));
      if (t >= end) break;
      FlowSpec f;
      f.src = src;
      f.start = t;
      f.bytes = c.cdf.sample(r.uniform(), c.interpolation);
      if (c.pattern == CdfPattern::kPermutation) {
        f.dst = partner[h];
      } else {
        const auto d = static_cast<uint32_t>(r.below(static_cast<uint64_t>(hosts) - 1));
        f.dst = d >= src ? d + 1 : d;
      }
      out.push_back(f);
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const FlowSpec& a, const FlowSpec& b) { return a.start < b.start; });
  if (c.connection_per_flow) {
    std::unordered_map<uint64_t, int32_t> next;  // host pair -> its flows so far
    for (FlowSpec& f : out) f.channel = next[(static_cast<uint64_t>(f.src) << 32) | f.dst]++;
  }
  return out;
}

double offered_load(const CdfWorkloadConfig& c, int hosts, const std::vector<FlowSpec>& flows) {
  long double bytes = 0;
  for (const auto& f : flows) bytes += static_cast<long double>(f.bytes);
  const long double capacity = static_cast<long double>(hosts) *
                               static_cast<long double>(c.nic_rate.bps()) / 8 *
                               static_cast<long double>(c.duration.sec_f());
  return capacity > 0 ? static_cast<double>(bytes / capacity) : 0.0;
}

std::vector<std::string_view> shipped_cdf_names() {
  std::vector<std::string_view> names;
  for (const auto& s : kShippedCdfs) names.emplace_back(s.name);
  return names;
}

std::optional<std::string_view> shipped_cdf(std::string_view name) {
  for (const auto& s : kShippedCdfs) {
    if (name == s.name) return std::string_view(s.text);
  }
  return std::nullopt;
}

namespace {

std::string shipped_list() {
  std::string out;
  for (auto n : shipped_cdf_names()) out += fmt::format("{}\"{}\"", out.empty() ? "" : ", ", n);
  return out;
}

// The CDF `source` names: a shipped distribution, else a file (relative paths from the scenario
// file's directory). A missing or malformed file is an error naming it, the line and what the
// line should hold.
SizeCdf load_cdf(Section& s, const std::string& source) {
  std::string error;
  if (const auto text = shipped_cdf(source)) {
    auto cdf = SizeCdf::parse(*text, &error);
    FABSIM_CHECK(cdf.has_value());  // workload/cdf/*.txt are checked by the tests
    if (cdf) return *cdf;
    s.fail("cdf", fmt::format("a valid shipped CDF ({}: {})", source, error));
  }
  std::filesystem::path path(source);
  if (path.is_relative()) path = std::filesystem::path(s.file()).parent_path() / path;
  std::ifstream in(path);
  if (!in) {
    s.fail("cdf", fmt::format("one of {} or a readable CDF file ({}: cannot open)", shipped_list(),
                              path.string()));
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto cdf = SizeCdf::parse(text, &error);
  if (!cdf) {
    s.fail("cdf", fmt::format("a CDF file of `size_bytes cdf_percent` lines from percent 0 to 100 "
                              "({} {})",
                              path.string(), error));
  }
  return *cdf;
}

class CdfKind final : public WorkloadKind {
 public:
  std::string_view name() const override { return "cdf"; }
  std::string_view description() const override {
    return "flow sizes from a CDF (web search, Hadoop, storage, RPC), Poisson arrivals per host "
           "at a target load of its NIC, for a duration; reports slowdown by flow size";
  }
  KindConfig load(Section& s, const HostShape& hosts) const override {
    CdfWorkloadConfig c;
    c.source = s.text("cdf", c.source,
                      fmt::format("flow-size distribution: {} (workload/cdf/*.txt), or a file of "
                                  "`size_bytes cdf_percent` lines (HPCC's format), relative to the "
                                  "scenario file",
                                  shipped_list()));
    c.interpolation =
        s.choice("interpolation", "linear", {"linear", "step"},
                 "linear: sizes uniform between two points, truncated (HPCC); step: each point a "
                 "discrete size (Homa). The mean, and so the arrival rate, follows it") == "step"
            ? CdfInterpolation::kStep
            : CdfInterpolation::kLinear;
    c.load = s.real("load", c.load, 0.0, 1.0,
                    "offered load, fraction of each host's NIC rate, in (0, 1]; mean gap between a "
                    "host's arrivals = 8 x mean size / (nic_rate x load)");
    c.duration = s.time("duration", c.duration,
                        "arrival window: flows start in [start, start + "
                        "duration)");
    c.start = s.time("start", c.start, "start of the arrival window");
    c.pattern =
        s.choice("pattern", "uniform", {"uniform", "permutation"},
                 "uniform: each flow to a uniformly random other host (HPCC); "
                 "permutation: every host to one partner of a random derangement") == "permutation"
            ? CdfPattern::kPermutation
            : CdfPattern::kUniform;
    c.connection_per_flow =
        s.choice("connections", "flow", {"flow", "pair"},
                 "flow: each flow its own connection (a QP, a PDC), as HPCC's ns-3 and uet-htsim "
                 "open one per flow; pair: a host pair's flows share one and wait in turn (a "
                 "short flow behind a long one)") == "flow";
    if (s.describing()) return KindConfig::of(c);
    if (!(c.load > 0)) s.fail("load", "a fraction of the NIC rate in (0, 1]");
    if (c.duration <= Time()) s.fail("duration", "a positive duration");
    c.cdf = load_cdf(s, c.source);
    c.nic_rate = hosts.nic_rate;
    if (c.nic_rate.bps() <= 0) s.fail("load", "a topology with a NIC rate (it sets the load)");
    // Runnable, but most likely a unit slip: the window may well see no flow at all.
    const double expected =
        static_cast<double>(hosts.hosts) * static_cast<double>(c.duration.ps()) / c.mean_gap_ps();
    if (expected < 1) {
      s.warn("duration",
             fmt::format("{} hosts expect {:.2f} arrivals in {} (one per {:.3f} us per host at "
                         "this load and mean size): the run may have no flow",
                         hosts.hosts, expected, to_string(c.duration), c.mean_gap_ps() * 1e-6));
    }
    return KindConfig::of(c);
  }
  WorkloadPlan plan(const KindConfig& cfg, int hosts, Rng& rng) const override {
    const auto& c = cfg.get<CdfWorkloadConfig>();
    WorkloadPlan p;
    p.flows = cdf_flows(c, hosts, rng);
    int64_t bytes = 0;
    for (const auto& f : p.flows) bytes += f.bytes;
    p.summary = {{"kind", "cdf"},
                 {"cdf", c.source},
                 {"mean_flow_bytes", c.mean_bytes()},
                 {"mean_gap_ps", c.mean_gap_ps()},
                 {"target_load", c.load},
                 {"offered_load", offered_load(c, hosts, p.flows)},
                 {"flows", p.flows.size()},
                 {"bytes", bytes}};
    p.slowdown = true;
    return p;
  }
  WorkloadDemand demand(const KindConfig& cfg, int hosts) const override {
    const auto& c = cfg.get<CdfWorkloadConfig>();
    // The expected count; the resource guard is an estimate.
    const double n = static_cast<double>(hosts) * static_cast<double>(c.duration.ps()) /
                     std::max(c.mean_gap_ps(), 1.0);
    constexpr auto kMax = static_cast<double>(std::numeric_limits<uint64_t>::max());
    WorkloadDemand d;
    d.flows = n >= kMax ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(n);
    d.planned = d.flows;
    const double bytes = n * c.mean_bytes();
    d.bytes = bytes >= kMax ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(bytes);
    d.key = "workload.duration";
    d.why = fmt::format("about {:.0f} Poisson arrivals: {} hosts x {} / a mean gap of {:.3f} us", n,
                        hosts, to_string(c.duration), c.mean_gap_ps() * 1e-6);
    return d;
  }
  std::vector<WorkloadStart> starts(const KindConfig& cfg) const override {
    return {{"start", cfg.get<CdfWorkloadConfig>().start}};
  }
};

}  // namespace

std::unique_ptr<WorkloadKind> make_cdf_kind() {
  return std::make_unique<CdfKind>();
}

}  // namespace fabsim
