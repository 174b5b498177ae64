// The conservation ledger; see ledger.h.
#include "core/ledger.h"

#include <fmt/format.h>  // violation text

namespace fabsim {

std::string_view drop_cause_name(DropCause c) {
  switch (c) {
    case DropCause::kBuffer:
      return "buffer";
    case DropCause::kAdmission:
      return "admission";
    case DropCause::kRandomLoss:
      return "random_loss";
    case DropCause::kBurstLoss:
      return "burst_loss";
    case DropCause::kBitError:
      return "bit_error";
    case DropCause::kDeadLink:
      return "dead_link";
    case DropCause::kUnroutable:
      return "unroutable";
    case DropCause::kReorderDiscard:
      return "reorder_discard";
    case DropCause::kCount:
      break;
  }
  return "?";
}

bool ClassLedger::balanced() const {
  const Tally out = dropped_total();
  return injected.packets == delivered.packets + out.packets + in_flight.packets &&
         injected.bytes == delivered.bytes + out.bytes + trimmed_bytes + in_flight.bytes;
}

ClassLedger LedgerReport::total() const {
  ClassLedger t;
  for (const ClassLedger& c : classes) {
    t.injected += c.injected;
    t.delivered += c.delivered;
    for (int d = 0; d < kDropCauses; ++d) t.dropped[d] += c.dropped[d];
    t.trimmed_bytes += c.trimmed_bytes;
    t.in_flight += c.in_flight;
  }
  return t;
}

bool LedgerReport::balanced() const {
  return violation().empty();
}

std::string LedgerReport::violation() const {
  if (!closed) return "the ledger was never closed";
  if (double_counted > 0) {
    return fmt::format("{} packets were delivered or dropped twice, or without being injected",
                       double_counted);
  }
  if (consumed_but_live > 0) {
    return fmt::format("{} packets were delivered or dropped but never returned to the pool",
                       consumed_but_live);
  }
  for (int c = 0; c < kNumClasses; ++c) {
    const ClassLedger& l = classes[c];
    if (l.balanced()) continue;
    const Tally out = l.dropped_total();
    return fmt::format(
        "class {}: injected {} packets / {} B != delivered {} / {} + dropped {} / {} + trimmed "
        "{} B + in flight {} / {}",
        c, l.injected.packets, l.injected.bytes, l.delivered.packets, l.delivered.bytes,
        out.packets, out.bytes, l.trimmed_bytes, l.in_flight.packets, l.in_flight.bytes);
  }
  return "";
}

LedgerReport Ledger::close(const PacketPool& pool) const {
  LedgerReport r;
  r.classes = classes_;
  for (ClassLedger& c : r.classes) c.in_flight = Tally{};
  r.double_counted = double_counted_;
  pool.for_each_live([&r](const Packet& p) {
    if ((p.ledger & kInjected) == 0) {
      ++r.unsent;
    } else if ((p.ledger & kDone) != 0) {
      ++r.consumed_but_live;
    } else {
      r.classes[p.ledger & kClassMask].in_flight.add(p);
    }
  });
  r.closed = true;
  return r;
}

}  // namespace fabsim
