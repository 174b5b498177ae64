// Receiver credit for Ultra Ethernet (RCCC, the UE name of CBRC; EQDS is the paper it comes
// from): REFERENCE.md §4.1 and §4.6, seed 001. Packet-free state machines, tested to the exact
// value like selective_repeat.h; transport/uet/uet.cpp moves the packets.
//  - CreditSource: a sending PDC's credit. It starts a PDC with a speculative window, spends
//    credit by frame bytes (it may send while credit > 0, so it goes negative by less than one
//    frame), adds the receiver's grants (cumulative pull numbers in quanta, robust to a lost
//    grant), clips at the ceiling, and computes the pull target each data packet carries.
//  - CreditWasteFix: seed 001's receiver-side AIMD on the MTU coefficient of the grant, for a
//    sender that flags accumulated credit above a cap (the patent's formulas were figures the
//    text lost; these are derived from its description and marked [UNVERIFIED]).
//  - CreditLedger: where every credited byte went, per PDC; summed per sender and receiver.
#pragma once

#include <cstdint>  // quanta, bytes
#include <deque>    // pacer lists
#include <vector>   // senders

namespace fabsim {

/// Credit bookkeeping of one PDC, in bytes. Issued at the receiver; the rest at the sender:
/// spec + received = used + clipped + zeroed_spec + expired + remaining credit.
struct CreditLedger {
  int64_t issued = 0;       // granted by the receiver's pacer
  int64_t received = 0;     // grants that reached the sender (issued - received: lost/in flight)
  int64_t spec = 0;         // speculative credit a new PDC starts with
  int64_t used = 0;         // frame bytes sent against credit
  int64_t clipped = 0;      // grants above the sender's ceiling, thrown away
  int64_t zeroed_spec = 0;  // speculative credit left when speculation ended
  int64_t expired = 0;      // credit left when the PDC closed or failed
  int64_t remaining = 0;    // credit held now (negative by less than a frame after a send)
  int64_t held = 0;         // the positive part of remaining, summed over PDCs with nothing to send
  /// Credit the receiver spent pacing time on and nobody sent against (seed 001's "waste"):
  /// clipped, expired, and, at the end of a run, held by PDCs with nothing left to send it on.
  int64_t wasted() const { return clipped + expired + held; }
  CreditLedger& operator+=(const CreditLedger& o) {
    issued += o.issued;
    received += o.received;
    spec += o.spec;
    used += o.used;
    clipped += o.clipped;
    zeroed_spec += o.zeroed_spec;
    expired += o.expired;
    remaining += o.remaining;
    held += o.held;
    return *this;
  }
};

struct CreditConfig {
  int64_t quantum = 256;    // bytes per pull number (uet-htsim's UEC_PULL_QUANTUM) [UNVERIFIED]
  int64_t max_credit = 0;   // ceiling of a sender's credit (the configured maxwnd, 1.5 BDP)
  int64_t spec_window = 0;  // speculative credit of a new PDC (0 = none)
  int64_t mtu = 0;          // frame bytes of a full packet
  bool divide = true;       // divide the pull target by the NIC's sending PDCs (uet-htsim)
  bool fix = false;         // seed 001: flag credit above `fix_cap`
  int64_t fix_cap = 0;      // bytes
};

class CreditSource {
 public:
  explicit CreditSource(const CreditConfig& cfg) : cfg_(cfg) {}

  /// A new PDC: speculative credit, until the first ACK, NACK or grant (credit held from an
  /// earlier PDC has expired at its close, so this starts from nothing).
  void open() {
    speculating_ = cfg_.spec_window > 0;
    credit_ += cfg_.spec_window;
    ledger_.spec += cfg_.spec_window;
  }
  bool can_send() const { return credit_ > 0; }
  void spend(int64_t bytes) {
    credit_ -= bytes;
    ledger_.used += bytes;
  }
  /// The first ACK, NACK or grant of a PDC: speculative credit still left is dropped.
  void end_speculation() {
    if (!speculating_) return;
    speculating_ = false;
    if (credit_ > 0) {
      ledger_.zeroed_spec += credit_;
      credit_ = 0;
    }
  }
  /// A grant with cumulative pull number `pull`; an old or repeated one adds nothing. Returns
  /// the bytes added.
  int64_t grant(uint64_t pull);
  /// The PDC closes or fails: its remaining credit expires.
  void expire() {
    if (credit_ > 0) {
      ledger_.expired += credit_;
      credit_ = 0;
    }
  }
  /// The pull target (cumulative, in quanta) a data packet carries: REFERENCE.md §4.6.
  /// `backlog`, `rtx_backlog`: frame bytes not yet sent; `cwnd`: a window CC's window (< 0 if
  /// none); `active`: sending PDCs on this NIC.
  uint64_t pull_target(int64_t backlog, int64_t rtx_backlog, int64_t cwnd, int active) const;
  /// Seed 001: the credit the receivers granted has passed the cap, so the next data packet
  /// carries the flag. Not while speculating: the speculative window is not accumulated
  /// credit, and a flag on the first packets would hide the PDC's demand from the receiver.
  bool flagged() const { return flagged_at(credit_); }
  /// The same test for an accumulated credit counted wider (the sending NIC's, seed 001).
  bool flagged_at(int64_t accumulated) const {
    return cfg_.fix && !speculating_ && accumulated > cfg_.fix_cap;
  }

  int64_t credit() const { return credit_; }
  uint64_t pull() const { return pull_; }
  bool speculating() const { return speculating_; }
  CreditLedger ledger() const {
    CreditLedger l = ledger_;
    l.remaining = credit_;
    l.held = credit_ > 0 ? credit_ : 0;
    return l;
  }
  const CreditConfig& config() const { return cfg_; }

 private:
  CreditConfig cfg_;
  int64_t credit_ = 0;
  uint64_t pull_ = 0;
  bool speculating_ = false;
  CreditLedger ledger_;
};

/// Seed 001's fix at the receiver, for one sender. `n` counts consecutive flagged data
/// packets. While flagged, the grant's MTU coefficient is
///   ASL (active sender list): c0 * beta^n            (multiplicative decrease in n)
///   ISL (idle sender list):   floor(k * beta^n)
/// and once the flag stops:
///   ASL: c0 again (the patent: "restored to the original value");
///   ISL: at the i-th credit-timer tick since, min(floor(k * beta^n_last) + i * m, k): the
///        patent states the first step (+m, never above k); continuing it per tick is the
///        additive increase of "AIMD". [UNVERIFIED]: beta, k, m and this reading.
struct CreditFixConfig {
  double c0 = 4;      // CBRC's MTU coefficient of a grant (uet-htsim credit_per_pull: 4 MTU)
  double beta = 0.5;  // multiplicative decrease per flagged packet [UNVERIFIED]
  int k = 4;  // ISL credit coefficient (= c0: htsim's slow pull grants the same) [UNVERIFIED]
  int m = 1;  // ISL additive step [UNVERIFIED]
};

class CreditWasteFix {
 public:
  explicit CreditWasteFix(const CreditFixConfig& cfg) : cfg_(cfg) {}
  /// A data packet arrived, flagged or not.
  void on_data(bool flagged);
  /// The coefficient for a grant at a credit-timer tick, on the ASL or the ISL; an ISL tick
  /// after the flag stopped advances the additive step.
  double asl_coefficient() const;
  double isl_coefficient_tick();
  bool flagged() const { return flagged_; }
  int n() const { return n_; }

 private:
  CreditFixConfig cfg_;
  bool flagged_ = false;
  bool recovering_ = false;  // ISL: the flag stopped and the coefficient is below k
  int n_ = 0;                // consecutive flagged packets (the last run's, after it stops)
  int i_ = 0;                // ISL ticks since the flag stopped
};

/// The receiving NIC's credit pacer (REFERENCE.md §4.6, as uet-htsim's UEC receiver: an
/// active and an idle list, no separate resend list; resends are in the senders' pull
/// targets). One per host, over the PDCs sending to it. Each credit-timer tick serves:
///  - the ASL head (active senders, round robin): demand = highest pull target - latest pull;
///    the grant is coefficient x `mtu` (c0 = 4 x 4,096 B = 16 KiB, uet-htsim's grant whatever
///    the MTU; seed 001's coefficient while flagged), at most the demand; a sender with demand
///    left goes to the tail, a satisfied one to the ISL;
///  - else the ISL head (idle senders): "slow pull" grants of k x `mtu`, up to `slow_budget`
///    bytes per idle spell, then the sender leaves the lists.
/// The next tick comes after the granted quanta at the pacing rate (the transport's timer);
/// a tick that grants nothing costs 4 quanta (uet-htsim), and none is shorter than the
/// transport's `credit_timer` when one is set.
/// Pull numbers are cumulative quanta, so a lost grant is made good by the next.
struct CreditPacerConfig {
  int64_t quantum = 256;
  int64_t mtu = 4096;       // the unit of the grant's coefficient (uet-htsim: 4,096 B)
  int64_t slow_budget = 0;  // ISL credit per idle spell (uet-htsim: one maxwnd)
  bool fix = false;         // seed 001's AIMD on the coefficients
  CreditFixConfig fix_cfg;  // c0 is also the coefficient without the fix
};

class CreditScheduler {
 public:
  explicit CreditScheduler(const CreditPacerConfig& cfg) : cfg_(cfg) {}

  /// A sending PDC; returns its index.
  uint32_t add_sender();
  /// A data packet (or a credit request) carried pull target `target` (ignored while the
  /// packet is flagged: the field holds the flag, not a target).
  void on_data(uint32_t s, uint64_t target, bool flagged);
  /// The PDC closed: it leaves every list.
  void close(uint32_t s);

  enum class List : uint8_t { kNone, kActive, kIdle };
  struct Grant {
    uint32_t sender = 0;
    uint64_t pull = 0;   // the sender's new cumulative pull number
    int64_t quanta = 0;  // granted at this tick (0: a flagged sender's grant rounded to 0)
    List from = List::kNone;
  };
  /// One credit-timer tick. False if no list holds a sender (the pacer sleeps).
  bool tick(Grant* g);
  bool has_work() const { return !active_.empty() || !idle_.empty(); }

  uint64_t latest_pull(uint32_t s) const { return senders_[s].latest; }
  uint64_t highest_target(uint32_t s) const { return senders_[s].target; }
  List list(uint32_t s) const { return senders_[s].list; }
  int64_t issued(uint32_t s) const { return senders_[s].issued; }
  const CreditWasteFix& fix(uint32_t s) const { return senders_[s].fix; }

 private:
  struct Sender {
    explicit Sender(const CreditFixConfig& c) : fix(c) {}
    uint64_t target = 0;    // highest pull target seen
    uint64_t latest = 0;    // latest pull number granted
    int64_t slow_left = 0;  // ISL credit left in this idle spell
    int64_t issued = 0;     // bytes granted
    List list = List::kNone;
    uint32_t gen = 0;  // bumped at every join and close: list entries of older ones are stale
    CreditWasteFix fix;
  };
  struct Entry {
    uint32_t s;
    uint32_t gen;
  };
  /// The next valid entry of `q` for list `l` (stale ones dropped), or false.
  bool pop(std::deque<Entry>& q, List l, uint32_t* s);
  void join(uint32_t s, List l);
  int64_t quanta_of(double coefficient) const;
  void grant(uint32_t s, int64_t q, Grant* g);

  CreditPacerConfig cfg_;
  std::vector<Sender> senders_;
  std::deque<Entry> active_, idle_;
};

/// Fabric feedback on the receiver's pacer rate (REFERENCE.md §4.6: "the pacer rate can be
/// scaled down by PCIe or oversubscription feedback"; the rule is uet-htsim's OversubscribedCC
/// [code: uet-htsim oversubscribed_cc.cpp], its constants [UNVERIFIED] beyond that code). Credit
/// alone paces each receiver to its own link, so on an oversubscribed fabric the receivers
/// together grant more than the core carries; this slows a receiver's grants when its arriving
/// data shows fabric congestion. One per receiving host. Each period (about 1.5 base RTTs):
///   received = packets that reached the host's receivers (data, trimmed headers, requests),
///   ecn = data packets with CE, trimmed = headers cut in the fabric (not at the last hop);
///   if trimmed > 0:  rate -= trimmed / received                             (decrease)
///   g = (1 - alpha) g + alpha x ecn / (received - trimmed headers of any hop)
///   if g > target:   rate *= 1 - (g - target) x md                          (decrease)
///   no decrease:     rate += ai x 2^n if ecn = 0 else ai; n += 1 (n = 0 after a decrease)
///   rate clamped to [min_rate, 1]; the pacer grants at rate x its own rate.
struct FabricFeedbackConfig {
  double target = 0.3;     // ECN fraction the average may reach before a decrease
  double alpha = 0.5;      // weight of the newest period's ECN fraction
  double md = 0.5;         // decrease per unit of the average above target
  double ai = 0.01;        // increase per period, doubling over clean periods
  double min_rate = 0.01;  // floor (uet-htsim: max(0.01, 0.9 / the ToR oversubscription))
};

class FabricFeedback {
 public:
  explicit FabricFeedback(const FabricFeedbackConfig& cfg) : cfg_(cfg) {}
  /// A packet reached one of the host's receivers; `trimmed`: a header the fabric cut,
  /// `last_hop`: at the switch port towards this host; `ce`: untrimmed data with CE.
  void on_packet(bool trimmed, bool last_hop, bool ce) {
    ++received_;
    if (trimmed) {
      ++(last_hop ? trimmed_last_hop_ : trimmed_other_);
    } else if (ce) {
      ++ecn_;
    }
  }
  /// Ends a period: updates and returns the rate.
  double period();
  double rate() const { return rate_; }
  double g() const { return g_; }
  int clean_periods() const { return n_; }
  /// Nothing arrived in the last period and nothing is left to recover: the owner may stop
  /// the periods until the next packet (an idle host costs no events).
  bool settled() const { return (rate_ >= 1 || cfg_.ai <= 0) && g_ < 1e-3 && idle_; }
  /// The last period decided a decrease (the rate may already have been at the floor).
  bool decreased() const { return n_ == 0 && decided_; }

 private:
  FabricFeedbackConfig cfg_;
  double rate_ = 1;
  double g_ = 0;
  int n_ = 0;             // periods without a decrease since the last one
  bool idle_ = false;     // the last period saw no packet
  bool decided_ = false;  // a period has run
  uint64_t received_ = 0, ecn_ = 0, trimmed_last_hop_ = 0, trimmed_other_ = 0;  // this period
};

}  // namespace fabsim
