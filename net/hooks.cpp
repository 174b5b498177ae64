// Switch hooks; see hooks.h.
#include "net/hooks.h"

namespace fabsim {

void DequeueChain::on_dequeue(Packet& p, EgressPort& port) {
  for (int i = 0; i < n_; ++i) hooks_[i]->on_dequeue(p, port);
}

}  // namespace fabsim
