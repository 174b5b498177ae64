// Switch hooks; see hooks.h.
#include "net/hooks.h"

#include "net/port.h"

namespace fabsim {

bool DequeueHook::may_act(const EgressPort& port, uint8_t cls) const {
  return port.queued_bytes(cls) != 0;
}

bool DequeueChain::may_act(const EgressPort& port, uint8_t cls) const {
  for (int i = 0; i < n_; ++i) {
    if (hooks_[i]->may_act(port, cls)) return true;
  }
  return false;
}

void DequeueChain::on_dequeue(Packet& p, EgressPort& port) {
  for (int i = 0; i < n_; ++i) hooks_[i]->on_dequeue(p, port);
}

}  // namespace fabsim
