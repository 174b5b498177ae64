// Sender-side entropy selection; see entropy.h.
#include "lb/entropy.h"

#include <algorithm>  // find_if, remove_if
#include <array>      // name table
#include <string>     // messages

#include "core/assert.h"

namespace fabsim {
namespace {

constexpr std::array<std::string_view, 4> kKindNames = {"oblivious", "bitmap", "reps", "mixed"};

bool is_power_of_two(uint32_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}

}  // namespace

std::vector<std::string_view> entropy_kind_names() {
  return {kKindNames.begin(), kKindNames.end()};
}

std::string_view entropy_kind_name(EntropyKind kind) {
  return kKindNames[static_cast<size_t>(kind)];
}

std::optional<EntropyKind> parse_entropy_kind(std::string_view name) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == name) return static_cast<EntropyKind>(i);
  }
  return std::nullopt;
}

EntropySelector::EntropySelector(const EntropyConfig& cfg, Rng rng)
    : cfg_(cfg), rng_(rng), mask_(static_cast<uint16_t>(cfg.paths - 1)) {
  FABSIM_CHECK(is_power_of_two(cfg.paths) && cfg.paths <= 65536);
  FABSIM_CHECK(cfg.max_penalty > 0 && cfg.reps_ring > 0);
  // The draw order (high bits, then the first cycle's mask) is the same for every kind, so a
  // Bitmap selector without penalties repeats the Oblivious sequence of the same Rng.
  if (cfg.random_high_bits) {
    high_ = static_cast<uint16_t>(static_cast<uint16_t>(rng_.next()) & ~mask_);
  }
  xor_ = static_cast<uint32_t>(rng_.below(cfg.paths));
  if (cfg.kind == EntropyKind::kBitmap || cfg.kind == EntropyKind::kMixed) {
    penalty_.assign(cfg.paths);
    unpenalised_ = cfg.paths;
  }
  if (cfg.kind == EntropyKind::kReps) ring_.reserve(cfg.reps_ring);
}

uint16_t EntropySelector::next(Time now) {
  switch (cfg_.kind) {
    case EntropyKind::kOblivious:
      return cycle_next();
    case EntropyKind::kBitmap:
      return bitmap_next();
    case EntropyKind::kReps:
      return reps_next(now);
    case EntropyKind::kMixed:
      if (!fifo_.empty()) {
        const uint16_t ev = fifo_.front();
        fifo_.pop_front();
        ++stats_.recycled;
        return ev;
      }
      return bitmap_next();
  }
  return 0;
}

void EntropySelector::feedback(uint16_t ev, Time now, EvFeedback f) {
  switch (cfg_.kind) {
    case EntropyKind::kOblivious:
      return;
    case EntropyKind::kBitmap:
      penalise(ev, f);
      return;
    case EntropyKind::kReps:
      reps_feedback(ev, now, f);
      return;
    case EntropyKind::kMixed:
      penalise(ev, f);
      if (f == EvFeedback::kGood) fifo_.push_back(ev);
      return;
  }
}

uint8_t EntropySelector::penalty(uint16_t ev) const {
  return penalty_.empty() ? 0 : penalty_[ev & mask_];
}

uint32_t EntropySelector::fresh() const {
  return static_cast<uint32_t>(
      std::count_if(ring_.begin(), ring_.end(), [](const Remembered& r) { return r.fresh; }));
}

void EntropySelector::advance() {
  if (++index_ == cfg_.paths) {
    index_ = 0;
    xor_ = static_cast<uint32_t>(rng_.below(cfg_.paths));
  }
}

uint16_t EntropySelector::cycle_next() {
  const auto ev = static_cast<uint16_t>((index_ ^ xor_) & mask_);
  advance();
  return ev | high_;
}

// htsim's rule [code: uet-htsim UecMpBitmap]: walk the cycle past penalised EVs, decrementing
// only the first one passed over; after a full cycle of them, send on the one reached.
// When every EV is penalised (an incast, where every path marks ECN at the last hop) the walk
// is a full cycle: `paths` steps that wrap exactly once, so one draw of the next cycle's mask,
// and the cycle position ends where it began. That is taken in one step, with the same draws
// and the same EV as the walk (Entropy.AFullCycleShortcutMatchesTheWalk).
uint16_t EntropySelector::bitmap_next() {
  auto ev = static_cast<uint16_t>((index_ ^ xor_) & mask_);
  if (penalty_[ev] > 0) {
    if (--penalty_[ev] == 0) ++unpenalised_;
    ++stats_.skipped;
    if (unpenalised_ == 0) {  // nothing the walk could stop at: a full cycle
      stats_.skipped += cfg_.paths - 1;
      xor_ = static_cast<uint32_t>(rng_.below(cfg_.paths));  // the one wrap's draw
      ev = static_cast<uint16_t>((index_ ^ xor_) & mask_);
      advance();
      return ev | high_;
    }
    advance();
    ev = static_cast<uint16_t>((index_ ^ xor_) & mask_);
    for (uint32_t walked = 1; penalty_[ev] > 0 && walked < cfg_.paths; ++walked) {
      ++stats_.skipped;
      advance();
      ev = static_cast<uint16_t>((index_ ^ xor_) & mask_);
    }
  }
  advance();
  return ev | high_;
}

void EntropySelector::penalise(uint16_t ev, EvFeedback f) {
  uint32_t add = 0;
  switch (f) {
    case EvFeedback::kGood:
      return;
    case EvFeedback::kEcn:
      add = cfg_.ecn_penalty;
      break;
    case EvFeedback::kNack:
      add = cfg_.nack_penalty;
      break;
    case EvFeedback::kTimeout:
      add = cfg_.timeout_penalty;
      break;
  }
  uint8_t& p = penalty_[ev & mask_];
  if (p == 0 && add > 0) --unpenalised_;
  p = static_cast<uint8_t>(std::min<uint32_t>(p + add, cfg_.max_penalty));
}

uint16_t EntropySelector::random_ev() {
  ++stats_.random;
  return static_cast<uint16_t>(rng_.below(cfg_.paths)) | high_;
}

void EntropySelector::thaw_if_due(Time now) {
  if (!frozen_ || now <= thaw_at_) return;
  frozen_ = false;
  ring_.clear();
  explore_left_ = cfg_.reps_explore;
}

uint16_t EntropySelector::reps_next(Time now) {
  thaw_if_due(now);
  if (explore_left_ > 0) {
    --explore_left_;
    return random_ev();
  }
  if (frozen_) {
    // Reuse the remembered EVs round robin, least recently sent first; random only if none.
    if (ring_.empty()) return random_ev();
    Remembered r = ring_.front();
    ring_.erase(ring_.begin());
    r.fresh = false;
    ring_.push_back(r);
    ++stats_.recycled;
    return r.ev;
  }
  const auto it =
      std::find_if(ring_.begin(), ring_.end(), [](const Remembered& x) { return x.fresh; });
  if (it == ring_.end()) return random_ev();
  it->fresh = false;
  ++stats_.recycled;
  return it->ev;
}

void EntropySelector::remember(uint16_t ev) {
  if (ring_.size() == cfg_.reps_ring) ring_.erase(ring_.begin());
  ring_.push_back({ev, true});
}

void EntropySelector::reps_feedback(uint16_t ev, Time now, EvFeedback f) {
  thaw_if_due(now);
  switch (f) {
    case EvFeedback::kGood:
      remember(ev);
      return;
    case EvFeedback::kEcn:
    case EvFeedback::kNack:
      return;
    case EvFeedback::kTimeout:
      // Ours [UNVERIFIED]: htsim keeps a timed-out EV in the ring, so a freeze could reuse the
      // very EV whose path failed; here it is forgotten.
      ring_.erase(std::remove_if(ring_.begin(), ring_.end(),
                                 [ev](const Remembered& r) { return r.ev == ev; }),
                  ring_.end());
      // [code: uet-htsim] a timeout freezes only outside a freeze and outside exploration.
      if (cfg_.reps_freeze_on_timeout && !frozen_ && explore_left_ == 0) {
        frozen_ = true;
        thaw_at_ = now + cfg_.reps_freeze;
        ++stats_.freezes;
      }
      return;
  }
}

EntropyConfig load_entropy_config(Section& s, const EntropyConfig& def) {
  EntropyConfig c = def;
  const std::string kind = s.choice(
      "lb", entropy_kind_name(def.kind), entropy_kind_names(),
      "sender entropy (EV) selection, REFERENCE §4.3: oblivious cycles the EVs in a shuffled "
      "order; bitmap skips EVs penalised by ECN, NACK and timeouts; reps reuses EVs of ACKs "
      "without ECN and freezes after a timeout; mixed reuses EVs of ACKs without ECN, else "
      "bitmap (htsim's default)");
  c.kind = *parse_entropy_kind(kind);
  c.paths = static_cast<uint32_t>(
      s.integer("paths", def.paths, 1, 65536, "entropy values per PDC (a power of two)"));
  if (!s.describing() && !is_power_of_two(c.paths)) s.fail("paths", "a power of two");
  c.random_high_bits =
      s.boolean("lb_high_bits", def.random_high_bits,
                "EV bits above log2(paths) drawn once per PDC (false: EVs in [0, paths))");
  const auto penalty = [&s](std::string_view key, uint8_t d, std::string_view doc) {
    return static_cast<uint8_t>(s.integer(key, d, 0, 255, doc));
  };
  c.ecn_penalty = penalty("lb_ecn_penalty", def.ecn_penalty, "bitmap penalty of an ECN-marked ACK");
  c.nack_penalty = penalty("lb_nack_penalty", def.nack_penalty, "bitmap penalty of a NACK");
  c.timeout_penalty =
      penalty("lb_timeout_penalty", def.timeout_penalty, "bitmap penalty of a timeout");
  c.max_penalty = penalty("lb_max_penalty", def.max_penalty, "bitmap penalty ceiling");
  if (!s.describing() && c.max_penalty == 0) s.fail("lb_max_penalty", "at least 1");
  c.reps_ring = static_cast<uint32_t>(
      s.integer("lb_reps_ring", def.reps_ring, 1, 4096,
                "REPS: EVs of good ACKs remembered (8 in uet-htsim's code, not in REFERENCE)"));
  c.reps_freeze = s.time("lb_reps_freeze", def.reps_freeze,
                         "REPS: how long a timeout freezes the remembered EVs (10 ms in "
                         "uet-htsim's code, not in REFERENCE)");
  if (!s.describing() && c.reps_freeze < Time()) s.fail("lb_reps_freeze", "a duration >= 0");
  c.reps_explore = static_cast<uint32_t>(s.integer(
      "lb_reps_explore", def.reps_explore, 0, 65536,
      "REPS: random EVs sent when a freeze ends (16 in uet-htsim's code, not in REFERENCE)"));
  c.reps_freeze_on_timeout = s.boolean("lb_reps_freeze_on_timeout", def.reps_freeze_on_timeout,
                                       "REPS: a timeout freezes the remembered EVs");
  return c;
}

}  // namespace fabsim
