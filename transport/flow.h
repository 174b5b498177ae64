// Flows and their records. A flow is one message from a source host to a destination host;
// the workload creates flows, a transport moves their bytes, and the receiving side reports
// completion here (the workload layer listens to start dependent steps).
#pragma once

#include <cstddef>  // offsetof
#include <cstdint>  // ids, counters
#include <deque>    // records: stable references while flows are added
#include <vector>   // trace

#include "core/packet.h"
#include "core/units.h"

namespace fabsim {

struct FlowSpec {
  uint32_t src = 0;
  uint32_t dst = 0;
  int64_t bytes = 0;
  Time start;
  uint8_t tclass = 3;
  // Set by the job layer (-1 otherwise): which job, op instance, step and ranks.
  int32_t job = -1;
  int32_t op = -1;
  int32_t step = -1;
  int32_t src_rank = -1;
  int32_t dst_rank = -1;
  // NCCL channel of the collective this flow belongs to (REFERENCE.md §8.8; 0 otherwise): a
  // transport that keys connections by host pair opens one per channel, so each channel has
  // its own source port or entropy, hence its own ECMP path.
  int32_t channel = 0;
};

struct FlowRecord {
  FlowSpec spec;
  Time first_send = Time::max();  // first data packet handed to the NIC
  Time end = Time::max();         // last byte delivered in order at the receiver
  bool done = false;
  int64_t delivered = 0;             // payload bytes accepted by the receiver
  uint64_t packets_sent = 0;         // data packets transmitted, retransmissions included
  uint64_t packets_received = 0;     // data packets that reached the receiver
  uint64_t retransmissions = 0;      // data packets sent again
  uint64_t retransmitted_bytes = 0;  // their payload bytes
  uint64_t out_of_order = 0;         // arrivals with a sequence number below one already seen
  uint64_t ecn_marked = 0;           // data packets that arrived with CE
  uint64_t timeouts = 0;             // retransmission timeouts that rewound this flow
  bool trace = false;                // record per-packet events of this flow
  Time fct() const { return end - spec.start; }
};

/// One per-packet event of a traced flow.
struct TraceEvent {
  Time time;
  uint32_t flow = 0;
  char kind = 's';  // 's' sent, 'r' received, 'a' ACK, 'n' NACK, 'c' CNP received, 'C' CNP sent,
                    // 't' timeout
  uint64_t seq = 0;
  uint32_t bytes = 0;
};

/// Told when a flow completes (the workload layer starts dependent steps).
class FlowObserver {
 public:
  virtual ~FlowObserver() = default;
  virtual void on_flow_done(uint32_t flow, Time at) = 0;
};

class FlowTable {
 public:
  uint32_t add(const FlowSpec& spec) {
    records_.push_back(FlowRecord{spec});
    return static_cast<uint32_t>(records_.size() - 1);
  }
  FlowRecord& operator[](uint32_t id) { return records_[id]; }
  const FlowRecord& operator[](uint32_t id) const { return records_[id]; }
  size_t size() const { return records_.size(); }
  const std::deque<FlowRecord>& records() const { return records_; }
  void set_observer(FlowObserver* o) { observer_ = o; }

  // The bookkeeping every transport does, in one place.
  /// A data packet of flow `id` leaves its sender at `now` (`resent`: a retransmission).
  void sent(uint32_t id, const Packet& p, Time now, bool resent) {
    FlowRecord& r = records_[id];
    if (r.first_send == Time::max()) r.first_send = now;
    ++r.packets_sent;
    if (resent) {
      ++r.retransmissions;
      r.retransmitted_bytes += p.payload;
    }
    if (r.trace) trace({now, id, 's', p.seq, p.payload});
  }
  /// Prefetches the lines of flow `id`'s record that sent() and received() write (a hint).
  /// always_inline: GCC takes a function that only prefetches for pure and deletes its calls
  /// (docs/PERFORMANCE.md "A prefetch GCC deleted").
  [[gnu::always_inline]] void prefetch(uint32_t id) const {
    if (id < records_.size()) prefetch(&records_[id]);
  }
  [[gnu::always_inline]] static void prefetch(const FlowRecord* record) {
    const auto* r = reinterpret_cast<const char*>(record);
    __builtin_prefetch(r + offsetof(FlowRecord, first_send), 1);
    __builtin_prefetch(r + offsetof(FlowRecord, retransmissions), 1);
    __builtin_prefetch(r + offsetof(FlowRecord, trace), 1);
  }
  /// A data packet of flow `id` reaches its receiver at `now`.
  void received(uint32_t id, const Packet& p, Time now) {
    FlowRecord& r = records_[id];
    ++r.packets_received;
    if (p.ecn == Ecn::kCe) ++r.ecn_marked;
    if (r.trace) trace({now, id, 'r', p.seq, p.payload});
  }
  /// `bytes` of flow `id` are delivered in order at `now`; the flow completes with its last.
  void delivered(uint32_t id, int64_t bytes, Time now) {
    FlowRecord& r = records_[id];
    r.delivered += bytes;
    if (r.delivered == r.spec.bytes) complete(id, now);
  }

  /// Marks flow `id` complete at `t` and tells the observer.
  void complete(uint32_t id, Time t) {
    records_[id].done = true;
    records_[id].end = t;
    ++completed_;
    if (observer_ != nullptr) observer_->on_flow_done(id, t);
  }
  size_t completed() const { return completed_; }
  void trace(const TraceEvent& e) { trace_.push_back(e); }
  const std::vector<TraceEvent>& trace_events() const { return trace_; }

 private:
  std::deque<FlowRecord> records_;
  std::vector<TraceEvent> trace_;
  FlowObserver* observer_ = nullptr;
  size_t completed_ = 0;
};

}  // namespace fabsim
