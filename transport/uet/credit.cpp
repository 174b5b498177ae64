// Receiver credit state machines; see credit.h.
#include "transport/uet/credit.h"

#include <algorithm>  // min, max
#include <cmath>      // pow, floor, ldexp

namespace fabsim {

int64_t CreditSource::grant(uint64_t pull) {
  if (pull <= pull_) return 0;
  const int64_t add = static_cast<int64_t>(pull - pull_) * cfg_.quantum;
  pull_ = pull;
  ledger_.received += add;
  credit_ += add;
  if (cfg_.max_credit > 0 && credit_ > cfg_.max_credit) {
    ledger_.clipped += credit_ - cfg_.max_credit;
    credit_ = cfg_.max_credit;
  }
  return add;
}

uint64_t CreditSource::pull_target(int64_t backlog, int64_t rtx_backlog, int64_t cwnd,
                                   int active) const {
  int64_t pt = backlog + rtx_backlog;
  if (cwnd >= 0) pt = std::min(pt, cwnd + cfg_.mtu);
  pt = std::min(pt, cfg_.max_credit) - credit_;
  if (speculating_ && pt < cfg_.mtu && backlog > 0) pt = cfg_.mtu;
  if (cfg_.divide && active > 1) pt /= active;
  if (pt <= 0) return pull_;  // no demand beyond what was granted
  return pull_ + static_cast<uint64_t>((pt + cfg_.quantum - 1) / cfg_.quantum);
}

void CreditWasteFix::on_data(bool flagged) {
  if (flagged) {
    if (!flagged_) n_ = 0;  // a new run of flagged packets
    flagged_ = true;
    recovering_ = false;
    ++n_;
    return;
  }
  if (flagged_) {
    flagged_ = false;
    recovering_ = true;
    i_ = 0;
  }
}

double CreditWasteFix::asl_coefficient() const {
  return flagged_ ? cfg_.c0 * std::pow(cfg_.beta, n_) : cfg_.c0;
}

double CreditWasteFix::isl_coefficient_tick() {
  const double decreased = std::floor(cfg_.k * std::pow(cfg_.beta, n_));
  if (flagged_) return decreased;
  if (!recovering_) return cfg_.k;
  ++i_;
  const double c = std::min(decreased + i_ * cfg_.m, static_cast<double>(cfg_.k));
  if (c >= cfg_.k) recovering_ = false;
  return c;
}

uint32_t CreditScheduler::add_sender() {
  senders_.emplace_back(cfg_.fix_cfg);
  return static_cast<uint32_t>(senders_.size() - 1);
}

// A sender is in at most one list, once (uet-htsim can list an idle sender twice; not here).
// Entries of a sender that moved or closed are skipped lazily: each join and close starts a new
// generation, so an old entry never counts again, even when the sender is back in the same
// list before it is popped (before, it then held two turns per round for as long as it had
// demand).
void CreditScheduler::join(uint32_t s, List l) {
  Sender& e = senders_[s];
  if (e.list == l) return;
  e.list = l;
  ++e.gen;
  if (l == List::kActive) active_.push_back({s, e.gen});
  if (l == List::kIdle) {
    e.slow_left = cfg_.slow_budget;
    idle_.push_back({s, e.gen});
  }
}

bool CreditScheduler::pop(std::deque<Entry>& q, List l, uint32_t* s) {
  while (!q.empty()) {
    const Entry x = q.front();
    q.pop_front();
    const Sender& e = senders_[x.s];
    if (e.list == l && e.gen == x.gen) {
      *s = x.s;
      return true;
    }
  }
  return false;
}

void CreditScheduler::on_data(uint32_t s, uint64_t target, bool flagged) {
  Sender& e = senders_[s];
  if (cfg_.fix) e.fix.on_data(flagged);
  if (!flagged && target > e.target) e.target = target;
  if (e.target > e.latest) join(s, List::kActive);
}

void CreditScheduler::close(uint32_t s) {
  Sender& e = senders_[s];
  e.list = List::kNone;
  ++e.gen;
  e.target = e.latest;
  e.fix = CreditWasteFix(cfg_.fix_cfg);  // the next PDC starts unflagged
}

int64_t CreditScheduler::quanta_of(double coefficient) const {
  return static_cast<int64_t>(coefficient * static_cast<double>(cfg_.mtu)) / cfg_.quantum;
}

void CreditScheduler::grant(uint32_t s, int64_t q, Grant* g) {
  Sender& e = senders_[s];
  e.latest += static_cast<uint64_t>(q);
  e.target = std::max(e.target, e.latest);
  e.issued += q * cfg_.quantum;
  g->sender = s;
  g->pull = e.latest;
  g->quanta = q;
}

bool CreditScheduler::tick(Grant* g) {
  const double c0 = cfg_.fix_cfg.c0;
  uint32_t s = 0;
  if (pop(active_, List::kActive, &s)) {
    Sender& e = senders_[s];
    e.list = List::kNone;
    const auto demand = static_cast<int64_t>(e.target - e.latest);
    const double coef = cfg_.fix ? e.fix.asl_coefficient() : c0;
    const int64_t q = std::min(demand, quanta_of(coef));
    grant(s, q, g);
    g->from = List::kActive;
    join(s, e.target > e.latest ? List::kActive : List::kIdle);
    return true;
  }
  if (pop(idle_, List::kIdle, &s)) {
    Sender& e = senders_[s];
    const double coef =
        cfg_.fix ? e.fix.isl_coefficient_tick() : static_cast<double>(cfg_.fix_cfg.k);
    const int64_t q = std::min(quanta_of(coef), (e.slow_left + cfg_.quantum - 1) / cfg_.quantum);
    e.slow_left -= q * cfg_.quantum;
    grant(s, q, g);
    g->from = List::kIdle;
    // A flagged sender whose ISL coefficient rounds to 0 leaves the list (it holds credit
    // enough); its next unflagged packet or request brings it back.
    if (e.slow_left > 0 && q > 0) {
      idle_.push_back({s, e.gen});  // the same turn goes on: same generation
    } else {
      e.list = List::kNone;
    }
    return true;
  }
  return false;
}

double FabricFeedback::period() {
  const auto total = static_cast<double>(received_);
  const auto headers = static_cast<double>(trimmed_last_hop_ + trimmed_other_);
  bool decrease = false;
  if (trimmed_other_ > 0) {
    rate_ -= static_cast<double>(trimmed_other_) / total;
    decrease = true;
  }
  const double fraction = total > headers ? static_cast<double>(ecn_) / (total - headers) : 0.0;
  g_ = g_ * (1 - cfg_.alpha) + cfg_.alpha * fraction;
  if (g_ > cfg_.target && cfg_.md > 0) {
    rate_ *= 1 - (g_ - cfg_.target) * cfg_.md;
    decrease = true;
  }
  if (decrease) {
    n_ = 0;
  } else {
    rate_ += ecn_ == 0 ? std::ldexp(cfg_.ai, std::min(n_, 64)) : cfg_.ai;
    ++n_;
  }
  rate_ = std::clamp(rate_, cfg_.min_rate, 1.0);
  idle_ = received_ == 0;
  decided_ = true;
  received_ = ecn_ = trimmed_last_hop_ = trimmed_other_ = 0;
  return rate_;
}

}  // namespace fabsim
