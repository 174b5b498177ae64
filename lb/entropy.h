// Sender-side entropy selection for Ultra Ethernet packet spraying (REFERENCE.md §4.3): each data
// packet of a PDC carries an entropy value (EV) in its UDP source port, switches ECMP-hash it, and
// the sending NIC picks the EV per packet from a pool of `paths` values, steered by what comes
// back (ACK without ECN, ACK with ECN, NACK, timeout). Four algorithms, as htsim's
// `-load_balancing_algo` (REFERENCE §9.3.2; default "mixed", 64 EVs):
//  - Oblivious: cycle an index 0..P-1 XORed with a mask redrawn at each wrap; feedback ignored.
//  - Bitmap: Oblivious's cycle, skipping EVs with a penalty (ECN +1, NACK +4, timeout 15, max 15);
//    a call decrements the first penalised EV it skips.
//  - REPS: EVs of ACKs without ECN go into a ring of 8; send on the earliest unused one, else a
//    random EV. A timeout freezes the ring (only remembered EVs are reused) for 10 ms, then the
//    ring is cleared and 16 random EVs explore.
//  - Mixed: a FIFO of EVs of ACKs without ECN (htsim's legacy REPS, unbounded) while it holds
//    any, else Bitmap.
// A pure state machine (STYLE.md: tested to the exact value after each event): no network, no
// allocation per packet (Mixed's FIFO grows by doubling, like a port queue), deterministic from
// the Rng it is given. One selector per sending PDC. Values not in REFERENCE come from reading
// uet-htsim (htsim/sim/uec_mp.cpp, buffer_reps.cpp) and are marked [code: uet-htsim]; choices
// of ours are marked [UNVERIFIED]. Each is a field of EntropyConfig.
#pragma once

#include <array>        // inline penalties
#include <cstdint>      // EVs, counters
#include <optional>     // parse result
#include <string_view>  // kind names
#include <vector>       // penalties, REPS ring

#include "config/reader.h"  // load_entropy_config
#include "core/ring.h"      // Mixed's FIFO
#include "core/rng.h"       // random EVs and masks
#include "core/units.h"     // Time

namespace fabsim {

enum class EntropyKind : uint8_t { kOblivious, kBitmap, kReps, kMixed };

/// What the sender learnt about the path of one EV.
enum class EvFeedback : uint8_t {
  kGood,    // ACK without ECN
  kEcn,     // ACK with ECN (CE seen by the receiver)
  kNack,    // NACK (e.g. a trimmed packet not at the last hop)
  kTimeout  // the packet sent on this EV timed out
};

/// The configuration names of the kinds ("oblivious", "bitmap", "reps", "mixed"), in that order,
/// for `Section::choice`.
std::vector<std::string_view> entropy_kind_names();
std::string_view entropy_kind_name(EntropyKind kind);
/// The kind of a configuration name; empty for an unknown name.
std::optional<EntropyKind> parse_entropy_kind(std::string_view name);

struct EntropyConfig {
  EntropyKind kind = EntropyKind::kMixed;  // htsim's default (REFERENCE §9.3.2)
  /// EVs per PDC: a power of two in [1, 65536]. 64 (htsim; the spec's pool is 64-256, §4.3).
  uint32_t paths = 64;
  /// Bits above log2(paths) of every EV are drawn once per selector, so PDCs between the same
  /// hosts hash apart (§4.3 "high bits are fixed per connection"). htsim's REPS draws in
  /// [0, paths) without them [code: uet-htsim]; false reproduces that for every kind.
  bool random_high_bits = true;
  // Bitmap penalties (REFERENCE §4.3); a penalty saturates at max_penalty.
  uint8_t ecn_penalty = 1;
  uint8_t nack_penalty = 4;
  uint8_t timeout_penalty = 15;
  uint8_t max_penalty = 15;
  /// REPS: remembered EVs of ACKs without ECN. 8 [code: uet-htsim buffer_reps.cpp].
  uint32_t reps_ring = 8;
  /// REPS: how long a timeout freezes the ring. 10 ms [code: uet-htsim buffer_reps.cpp].
  Time reps_freeze = Time::ms(10);
  /// REPS: random EVs sent after a freeze ends. 16 [code: uet-htsim uec_mp.cpp].
  uint32_t reps_explore = 16;
  /// REPS: whether a timeout freezes at all (htsim freezes only with trimming on, and exits
  /// otherwise [code: uet-htsim]).
  bool reps_freeze_on_timeout = true;
};

/// Draw counters of one selector (for the transport's statistics and for tests).
struct EntropyStats {
  uint64_t recycled = 0;  // EVs taken from the REPS ring or Mixed's FIFO
  uint64_t random = 0;    // EVs drawn at random (REPS)
  uint64_t skipped = 0;   // penalised EVs passed over (Bitmap, Mixed)
  uint64_t freezes = 0;   // REPS freezes entered
};

/// The EV choice of one sending PDC; see the file comment. `paths` must be a power of two
/// (checked once at construction). Times are the simulation's: the REPS freeze ends at the first
/// call of next() or feedback() strictly after `freeze start + reps_freeze` (htsim checks only in
/// feedback [code: uet-htsim]; checking in next() too is ours [UNVERIFIED]).
class EntropySelector {
 public:
  EntropySelector(const EntropyConfig& cfg, Rng rng);

  /// The EV for the next data packet.
  uint16_t next(Time now);
  /// What came back for a packet sent on `ev` (a value next() returned; its high bits are
  /// ignored by Bitmap, kept by REPS and Mixed, which return EVs as they were fed).
  void feedback(uint16_t ev, Time now, EvFeedback f);

  EntropyKind kind() const { return cfg_.kind; }
  /// The fixed bits above log2(paths) of this selector's EVs (0 without random_high_bits).
  uint16_t high_bits() const { return high_; }
  /// Bitmap penalty of `ev` (its low log2(paths) bits); 0 for kinds without a bitmap.
  uint8_t penalty(uint16_t ev) const;
  /// REPS: frozen now (as of the last call), EVs still to explore, EVs remembered and unused.
  bool frozen() const { return frozen_; }
  uint32_t exploring() const { return explore_left_; }
  uint32_t remembered() const { return static_cast<uint32_t>(ring_.size()); }
  uint32_t fresh() const;
  /// Mixed: EVs waiting in the FIFO.
  uint32_t queued() const { return static_cast<uint32_t>(fifo_.size()); }
  const EntropyStats& stats() const { return stats_; }

 private:
  struct Remembered {
    uint16_t ev = 0;
    bool fresh = false;  // not yet sent on since its ACK
  };
  uint16_t cycle_next();   // Oblivious order: the EV at the cursor, then advance
  uint16_t bitmap_next();  // Bitmap
  uint16_t reps_next(Time now);
  uint16_t random_ev();
  void advance();
  void thaw_if_due(Time now);
  void penalise(uint16_t ev, EvFeedback f);
  void reps_feedback(uint16_t ev, Time now, EvFeedback f);
  void remember(uint16_t ev);

  EntropyConfig cfg_;
  Rng rng_;
  uint16_t mask_;       // paths - 1 (paths = 65536 gives 0xFFFF)
  uint16_t high_ = 0;   // fixed bits above the mask
  uint32_t index_ = 0;  // cycle position in [0, paths)
  uint32_t xor_ = 0;    // this cycle's mask, redrawn at each wrap
  // The bitmap's penalties, one byte per EV index: inline up to kInline EVs (the default 64
  // are one line in the PDC's own lines, which the NIC prefetches before it pulls a packet;
  // on the heap they were one more miss per packet in an all-to-all), else on the heap.
  class Penalties {
   public:
    void assign(uint32_t n) {
      n_ = n;
      inline_.fill(0);
      heap_.assign(n > kInline ? n : 0, 0);
    }
    bool empty() const { return n_ == 0; }
    uint8_t& operator[](size_t i) { return n_ > kInline ? heap_[i] : inline_[i]; }
    uint8_t operator[](size_t i) const { return n_ > kInline ? heap_[i] : inline_[i]; }

   private:
    static constexpr uint32_t kInline = 64;
    std::array<uint8_t, kInline> inline_{};
    std::vector<uint8_t> heap_;
    uint32_t n_ = 0;
  };
  Penalties penalty_;             // Bitmap, Mixed
  uint32_t unpenalised_ = 0;      // EVs whose penalty is 0 (bitmap_next's full-cycle shortcut)
  std::vector<Remembered> ring_;  // REPS: oldest first, at most reps_ring
  Ring<uint16_t> fifo_;           // Mixed: EVs of good ACKs, oldest first
  bool frozen_ = false;
  Time thaw_at_;  // REPS: the freeze ends strictly after this time
  uint32_t explore_left_ = 0;
  EntropyStats stats_;
};

/// Declares the entropy keys of a transport's section (`lb`, `paths`, and `lb_*` for the
/// constants above) with their documentation, and reads them over `def`.
EntropyConfig load_entropy_config(Section& s, const EntropyConfig& def = {});

}  // namespace fabsim
