// An egress port: 8 traffic classes, strict priority for the control class (7) and DWRR among
// the data classes (0..6), PFC pause state per class, and serialization onto its link.
// DESIGN.md "The switch pipeline"; REFERENCE.md §1.3 for the pause semantics (802.1Qbb: a pause
// with quanta > 0 stops the class for quanta x 512 bit times or until a quanta-0 resume).
// The port arms one event at a time: the end of the current serialization.
// Per queue it may hold an admission hook (consulted by the switch at enqueue) and a dequeue hook
// (run here when a packet starts; net/hooks.h).
#pragma once

#include <array>    // per-class state
#include <cstdint>  // counters
#include <memory>   // pause state

#include "core/packet.h"
#include "core/ring.h"
#include "core/scheduler.h"
#include "core/simulation.h"
#include "net/hooks.h"
#include "net/link.h"

namespace fabsim {

class Node;

/// Counters of one egress port (always on; reported by the results layer).
struct PortCounters {
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;  // frame bytes
  uint64_t tx_data_packets = 0;
  int64_t peak_queue_bytes = 0;  // most bytes queued in the data classes at once
  uint64_t drops = 0;            // packets dropped on admission to this port's queues (all causes)
  uint64_t buffer_drops = 0;     //   of which the shared buffer had no room
  uint64_t hook_drops = 0;       //   of which an admission hook said drop
  uint64_t trims = 0;            // packets cut to their header by an admission hook
  uint64_t ecn_marks = 0;        // CE marks applied at dequeue
  uint64_t enqueue_marks = 0;    // CE marks applied at enqueue by an admission hook
  uint64_t pfc_sent = 0;         // pause/resume frames this node sent out of this port
  uint64_t pfc_received = 0;     // pause/resume frames received on this port
};

class alignas(64) EgressPort : public EventTarget {
 public:
  /// `pulls` = the owner supplies data packets on demand (a NIC) through Node::pull.
  EgressPort(Simulation& sim, Node* owner, uint16_t index, Link* link, bool pulls = false);
  ~EgressPort() override;
  EgressPort(const EgressPort&) = delete;
  EgressPort& operator=(const EgressPort&) = delete;

  /// Appends `p` to the queue of its class and starts transmitting if idle.
  void enqueue(Packet* p) { enqueue_as(p, p->tclass); }
  /// Appends `p` to the queue of class `cls`, whatever its own traffic class (a NIC sends its
  /// ACKs ahead of data even when the switches queue them in the data's class).
  void enqueue_as(Packet* p, uint8_t cls);
  /// Puts a pause frame at the head of the control class, behind the pause frames already
  /// waiting: a MAC sends PFC frames ahead of queued traffic, behind at most the frame being
  /// serialized (the headroom counts on it).
  void enqueue_pause(Packet* p);
  /// Starts a transmission if the port is idle and something is eligible (queued or pulled).
  void kick();
  /// Applies a received PFC frame to class `cls` (quanta 0 = resume).
  void apply_pause(uint8_t cls, uint16_t quanta);
  void on_event(uint32_t tag, uint32_t gen) override;
  void prefetch_next() const override;
  /// Prefetch hint for a packet about to join a queue: the lines enqueue() reads first (the
  /// queue lines' handle and slot map, the transmit state, the counters). Always inlined, as
  /// PacketPool::prefetch_fabric (GCC deletes calls to a prefetch-only function).
  [[gnu::always_inline]] void prefetch_enqueue() const {
    const auto* self = reinterpret_cast<const unsigned char*>(this);
    __builtin_prefetch(self, 1);
    __builtin_prefetch(self + 64, 1);
    __builtin_prefetch(self + 128, 1);
    __builtin_prefetch(self + kFirstLinesOffset, 1);  // the class lines enqueue_as() updates
    __builtin_prefetch(self + kFirstLinesOffset + 64, 1);
  }

  /// Caps the bytes of trimmed headers (Packet kTrimmed) at `share` of the link while data
  /// waits (UE spec §4.1, REFERENCE.md §4.4: fair queueing at 50 %, or WDRR at 25 %); 1 = no
  /// cap, the control class's strict priority. Other control packets keep strict priority.
  void set_trimmed_share(double share);
  /// DWRR weights of the data classes (default all 1); quantum = weight x `quantum_bytes`.
  void set_dwrr(const std::array<uint32_t, kNumClasses>& weights, int64_t quantum_bytes);

  /// Hooks of queue `cls` (not owned; null = none). See net/hooks.h.
  void set_admission_hook(uint8_t cls, AdmissionHook* h);
  /// A dequeue hook runs when the port starts sending a packet of the queue, or with
  /// `at_departure` when the last bit of it has left, with the queue as it is then; the packet
  /// still goes onto the link when it starts (on a link without delay, at its end; depart()).
  void set_dequeue_hook(uint8_t cls, DequeueHook* h, bool at_departure = false);
  /// Class `cls`'s hook runs at departure (set_dequeue_hook).
  bool at_departure(uint8_t cls) const { return (departs_ >> cls) & 1U; }
  /// The data class's admission hook that bounds the control class (a trim hook: its
  /// trimmed_bound(), uet-htsim's header queue), or null.
  AdmissionHook* header_bound_hook() const {
    return bound_cls_ != kNoQueue ? admission_hook(bound_cls_) : nullptr;
  }
  AdmissionHook* admission_hook(uint8_t cls) const {
    const uint8_t s = slot_[cls];
    return s != kNoQueue ? q_[s].admission : cls < kControlClass ? admission_[cls] : nullptr;
  }
  DequeueHook* dequeue_hook(uint8_t cls) const {
    const uint8_t s = slot_[cls];
    return s != kNoQueue ? q_[s].dequeue : dequeue_[cls];
  }

  /// A frame is being serialized (it left the queue and is already on its way down the link).
  bool busy() const { return sim_.now() < tx_end_; }
  bool paused(uint8_t cls) const { return (paused_mask_ >> cls) & 1U; }
  uint8_t paused_mask() const { return paused_mask_; }
  int64_t queued_bytes(uint8_t cls) const {
    return slot_[cls] != kNoQueue ? q_[slot_[cls]].bytes : 0;
  }
  /// Bytes queued in the data classes (every class below the control class).
  int64_t data_queued_bytes() const { return data_bytes_; }
  /// Bytes queued in every class.
  int64_t total_queued_bytes() const { return data_queued_bytes() + queued_bytes(kControlClass); }
  size_t queued_packets(uint8_t cls) const {
    return slot_[cls] != kNoQueue ? q_[slot_[cls]].q.size() : 0;
  }
  /// Classes that have a queue line (made by the class's first packet; hooks wait for it).
  int queue_count() const { return nq_; }
  /// Frame bytes of the frame being serialized (0 when idle).
  int64_t on_wire_bytes() const { return busy() ? tx_size_ : 0; }
  /// Removes and returns the last packet queued in class `cls` if it is data with a payload
  /// not yet trimmed (the switch trims it), else null.
  Packet* take_trimmable_tail(uint8_t cls);
  Link* link() const { return link_; }
  uint16_t index() const { return index_; }
  /// Time spent transmitting up to `now`, including the part of a frame on the wire.
  Time busy_time(Time now) const { return busy_ - (tx_end_ > now ? tx_end_ - now : Time()); }
  /// Time class `cls` of this port has spent paused (closed intervals; finish() closes the
  /// open ones).
  Time paused_time(uint8_t cls) const { return pause_ ? pause_->total[cls] : Time(); }
  PortCounters& counters() { return counters_; }
  const PortCounters& counters() const { return counters_; }
  /// Closes open pause intervals at the end of a run and returns queued packets to the pool.
  void finish();

 private:
  enum Tag : uint32_t { kTxDone = 0, kPauseExpiry = 1 };
  Packet* select();
  Packet* select_capped(uint8_t eligible);  // select() with a cap on trimmed headers
  Packet* select_data(uint8_t eligible);    // DWRR over the eligible data classes
  Packet* pop(uint8_t cls);
  uint8_t likely_class(uint8_t busy) const;  // of the classes in `busy` (not 0)
  void start(Packet* p);
  /// A switch port whose link is down sends nothing: `p` and everything queued behind it are
  /// lost at once (their buffer credited), not serialized onto the dead link one by one.
  void discard_all(Packet* p);
  void arm_tx_done();
  void depart();
  void resume(uint8_t cls);
  void arm_pause_expiry();

  // Layout (docs/PERFORMANCE.md "Cache lines per event"): what every end-of-frame event
  // reads sits in the first two cache lines, and each class's queue, byte count, hooks and
  // DWRR state in a line of its own, so that a port busy with one class touches three lines.
  // Queue lines exist only for the classes a port has carried or was given a hook for (most
  // ports carry a data class and the control class, two of eight): slot_ maps a class to its
  // line in q_. The hooks and DWRR weights of classes without a queue wait in cold arrays and
  // are copied into the line when it is made.
  static constexpr uint8_t kNoQueue = 0xFF;
  static constexpr uint8_t kHeld = 0x80;            // in departure_
  static constexpr int64_t kDefaultQuantum = 9216;  // DWRR bytes per turn before set_dwrr
  // The end-of-frame event reads the first three lines (the scheduler prefetches them):
  // pointers and the queue lines' handle, then the transmit state, then the hot counters.
  struct ClassQueue;
  Simulation& sim_;
  Node* owner_;
  Link* link_;
  Time tx_end_;    // the frame being serialized ends then (free from then on)
  ClassQueue* q_;  // first_q_, then (from a third class on) 8 lines in the arena
  uint16_t index_;
  uint8_t nonempty_ = 0;  // bit c set when queue c holds a packet
  uint8_t paused_mask_ = 0;
  bool pulls_ = false;
  uint8_t rr_ = 0;
  bool turn_started_ = false;
  uint8_t nq_ = 0;       // lines in use in q_ (room for 2, then 8)
  uint8_t hooked_ = 0;   // bit c: class c has a dequeue hook run at start (none on a NIC)
  uint8_t departs_ = 0;  // bit c set when class c's dequeue hook runs at departure
  std::array<uint8_t, kNumClasses> slot_;
  // The frame being serialized has its class's hook at departure: class + 1 (0 = no), and
  // kHeld when the link holds it until then (Link::hold).
  uint8_t departure_ = 0;
  uint8_t bound_cls_ = kNoQueue;  // a class whose admission hook bounds the control class
  uint32_t tx_size_ = 0;          // frame bytes of the frame being serialized
  int64_t data_bytes_ = 0;        // the data classes' bytes summed (INT and GSE read it per packet)
  Time busy_;                     // serialization time of every frame started
  Timer tx_timer_;                // kTxDone: armed for tx_end_ when something may wait for the wire
  struct alignas(64) ClassQueue {
    Ring<Packet*> q;
    int64_t bytes = 0;
    AdmissionHook* admission = nullptr;
    DequeueHook* dequeue = nullptr;
    int64_t deficit = 0;                // DWRR (the control class: the trimmed headers' balance)
    int64_t quantum = kDefaultQuantum;  // the control class: trimmed share, permille (0 = none)
  };
  static_assert(sizeof(ClassQueue) == 64, "one cache line per class");
  /// Class `c`'s queue line, made on first use (moves the other lines).
  ClassQueue& queue(uint8_t c) {
    const uint8_t s = slot_[c];
    if (s == kNoQueue) [[unlikely]]
      return add_queue(c);
    return q_[s];
  }
  ClassQueue& add_queue(uint8_t c);
  static constexpr uint8_t kFirstLines = 2;  // a data class and the control class

  // PFC pause state, allocated by the first pause this port receives (most ports of a lossy
  // fabric never get one, and a large fabric has thousands of ports).
  struct PauseState {
    std::array<Time, kNumClasses> until{};
    std::array<Time, kNumClasses> since{};
    std::array<Time, kNumClasses> total{};  // paused_time()
    Timer timer;
  };
  std::unique_ptr<PauseState> pause_;
  PortCounters counters_;
  // Configuration of classes that have no queue line yet.
  std::array<AdmissionHook*, kControlClass> admission_{};  // the control class has none
  std::array<DequeueHook*, kNumClasses> dequeue_{};
  std::array<uint32_t, kControlClass> quantum_;  // DWRR quantum of each data class, bytes
  // The first two class lines live in the port, at a fixed offset, so that prefetching an
  // enqueue needs no load of q_ (docs/PERFORMANCE.md "At 8,192 hosts").
  std::array<ClassQueue, kFirstLines> first_q_;

 public:
  static constexpr size_t kFirstLinesOffset = 384;
};
static_assert(sizeof(EgressPort) == EgressPort::kFirstLinesOffset + 2 * 64,
              "the port's state in six lines, then its first two class lines");

}  // namespace fabsim
