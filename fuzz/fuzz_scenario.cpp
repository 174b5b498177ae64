// libFuzzer target on the scenario loader: the bytes are a scenario file's text, loaded and
// validated by the same code as `fabsim validate` (load_scenario_text, then the effective
// scenario that every result file embeds). A ConfigError (bad input, exit 2) is an expected
// outcome; a crash, any other exception, a sanitizer report or a hang is a finding.
//
// Input: the TOML text up to the first NUL byte; after it, up to 4 NUL-separated `key=value`
// assignments applied as `--set` overrides.
#include <cstddef>      // size_t
#include <cstdint>      // uint8_t
#include <string>       // the text
#include <string_view>  // splitting the input
#include <vector>       // overrides

#include <toml++/toml.h>  // the pre-check of the shape's size

#include "config/reader.h"
#include "scenario/scenario.h"

namespace {

constexpr size_t kMaxInput = 16384;  // bytes; the shipped scenarios are at most about 2 KB
constexpr size_t kMaxOverrides = 4;

// The fuzzer explores parsing and validation, not huge shapes: the loader builds the topology to
// check fault cables and places every GPU of every job, so a million-host topology costs seconds
// and gigabytes. Those sizes are the resource guard's domain (issue 14 item 2); inputs beyond
// these bounds are skipped (and not kept in the corpus).
constexpr int64_t kMaxTopologyInt = 1024;  // any integer of [topology]
constexpr int64_t kMaxHosts = 4096;        // servers x gpus_per_server, hosts
constexpr int64_t kMaxRadix = 16;          // fat_tree k
constexpr double kMaxOversubscription = 8;

int64_t integer_of(const toml::table& t, std::string_view key, int64_t def) {
  const auto* n = t.get(key);
  if (n == nullptr || !n->is_integer()) return def;
  return n->as_integer()->get();
}

double number_of(const toml::table& t, std::string_view key) {
  const auto* n = t.get(key);
  if (n == nullptr) return 0;
  if (n->is_integer()) return static_cast<double>(n->as_integer()->get());
  if (n->is_floating_point()) return n->as_floating_point()->get();
  return 0;
}

bool within_bounds(const toml::table& root) {
  if (const auto* topo = root.get_as<toml::table>("topology")) {
    for (auto&& [key, value] : *topo) {
      if (value.is_integer() && value.as_integer()->get() > kMaxTopologyInt) return false;
    }
    const int64_t servers = integer_of(*topo, "servers", 4);
    const int64_t gpus = integer_of(*topo, "gpus_per_server", 8);
    if (servers * gpus > kMaxHosts) return false;  // each at most kMaxTopologyInt: no overflow
    if (integer_of(*topo, "k", 4) > kMaxRadix) return false;
    if (number_of(*topo, "tor_oversubscription") > kMaxOversubscription) return false;
  }
  return true;
}

// Whether the scenario, as the loader will see it (overrides applied), is within the bounds.
// Text that is not TOML and malformed overrides pass: the loader reports those itself.
bool shape_is_small(const std::string& text, const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, std::string_view("fuzz.toml"));
    for (const auto& o : overrides) fabsim::apply_override(root, o, "--set");
  } catch (const toml::parse_error&) {
    return true;
  } catch (const fabsim::ConfigError&) {
    return true;
  }
  return within_bounds(root);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInput) return -1;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string text(input.substr(0, nul));
  std::vector<std::string> overrides;
  for (size_t at = nul; at != std::string_view::npos && overrides.size() < kMaxOverrides;) {
    const size_t next = input.find('\0', at + 1);
    overrides.emplace_back(
        input.substr(at + 1, next == std::string_view::npos ? next : next - at - 1));
    at = next;
  }
  if (!shape_is_small(text, overrides)) return -1;
  try {
    const fabsim::ScenarioConfig cfg = fabsim::load_scenario_text(text, "fuzz.toml", overrides);
    // What `validate` prints, and the effective scenario every result file embeds.
    volatile int hosts = cfg.topology.hosts();
    (void)hosts;
    const std::string names = std::string(cfg.transport.name()) + std::string(cfg.workload.name());
    const std::string effective = cfg.effective.dump();
    if (effective.empty() || names.empty()) __builtin_trap();
  } catch (const fabsim::ConfigError&) {
    // Bad input: the expected outcome (exit 2). Anything else propagates and is a finding.
  }
  return 0;
}
