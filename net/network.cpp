// Network assembly; see network.h.
#include "net/network.h"

namespace fabsim {

Host& Network::add_host(std::string name) {
  const auto id = static_cast<uint32_t>(hosts_.size());
  hosts_.push_back(std::make_unique<Host>(sim_, id, std::move(name), endpoints_));
  return *hosts_.back();
}

Switch& Network::add_switch(const SwitchConfig& cfg, std::string name) {
  const auto id = static_cast<uint32_t>(switches_.size());
  switches_.push_back(std::make_unique<Switch>(sim_, cfg, id, std::move(name)));
  return *switches_.back();
}

Link* Network::make_link(const Link::Config& cfg, Node* dst, uint16_t dst_port, LinkRole role) {
  links_.push_back(sim_.arena().make<Link>(sim_, cfg, dst, dst_port, links_.size(), role));
  return links_.back().get();
}

uint16_t Network::connect(Host& h, Switch& s, const Link::Config& cfg) {
  const auto sp = static_cast<uint16_t>(s.port_count());
  h.attach(make_link(cfg, &s, sp, LinkRole::kHostUp));
  Link* down = make_link(cfg, &h, 0, LinkRole::kHostDown);
  h.set_inbound(down);
  return s.add_port(down);
}

std::pair<uint16_t, uint16_t> Network::connect(Switch& a, Switch& b, const Link::Config& cfg) {
  const auto pa = static_cast<uint16_t>(a.port_count());
  const auto pb = static_cast<uint16_t>(b.port_count());
  a.add_port(make_link(cfg, &b, pb, LinkRole::kFabric));
  b.add_port(make_link(cfg, &a, pa, LinkRole::kFabric));
  return {pa, pb};
}

void Network::finish() {
  for (auto& h : hosts_) {
    if (h->extension() != nullptr) h->extension()->finish();
    h->port().finish();
  }
  for (auto& s : switches_) {
    s->finish_extensions();
    for (size_t i = 0; i < s->port_count(); ++i) s->port(i).finish();
  }
  for (auto& l : links_) l->drain();
}

}  // namespace fabsim
