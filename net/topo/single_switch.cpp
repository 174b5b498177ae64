// One non-blocking switch (closed-form checks). See topology.h.
#include "net/topo/builder.h"

namespace fabsim {

TopologyInfo build_single_switch(Network& net, const SingleSwitchConfig& cfg,
                                 const SwitchConfig& sw, int64_t framing_bytes,
                                 const SelectorFactory& sel) {
  ClosBuilder b(net, "single_switch", sw, framing_bytes);
  const uint32_t s = b.add_switch("switch0", SwitchRole::kTor, 1).id();
  const Link::Config link = b.link(cfg.nic_rate, cfg.host_link_delay);
  for (int h = 0; h < cfg.hosts; ++h) {
    b.add_host("h" + std::to_string(h));
    b.attach(static_cast<uint32_t>(h), s, link);
  }
  return b.finish(sel);
}

namespace {

class SingleSwitchKind final : public TopologyKind {
 public:
  std::string_view name() const override { return "single_switch"; }
  std::string_view description() const override {
    return "all hosts on one non-blocking switch (closed-form checks)";
  }
  KindConfig load(Section& s) const override {
    SingleSwitchConfig c;
    c.hosts =
        static_cast<int>(s.integer("hosts", c.hosts, 2, 65535, "hosts on one non-blocking switch"));
    c.nic_rate = s.rate("nic_rate", c.nic_rate, "rate of each host link");
    c.host_link_delay =
        s.time("host_link_delay", c.host_link_delay, "propagation delay host-switch");
    return KindConfig::of(c);
  }
  HostShape shape(const KindConfig& cfg) const override {
    const auto& c = cfg.get<SingleSwitchConfig>();
    return {c.hosts, 0, 0, c.nic_rate, 1};
  }
  TopologyInfo build(Network& net, const KindConfig& cfg, const TopologyEnv& env) const override {
    return build_single_switch(net, cfg.get<SingleSwitchConfig>(), env.sw, env.framing_bytes,
                               env.selector);
  }
};

}  // namespace

std::unique_ptr<TopologyKind> make_single_switch_kind() {
  return std::make_unique<SingleSwitchKind>();
}

}  // namespace fabsim
