// Engine: scheduler order and ties, lazy timer cancellation, packet pool, histogram, RNG.
#include <gtest/gtest.h>

#include <algorithm>  // is_sorted
#include <set>        // reference order
#include <utility>    // pair
#include <vector>

#include "core/arena.h"
#include "core/packet_pool.h"
#include "core/ring.h"
#include "core/rng.h"
#include "core/scheduler.h"
#include "core/simulation.h"
#include "core/stats.h"

namespace fabsim {
namespace {
using namespace literals;

class Recorder : public EventTarget {
 public:
  explicit Recorder(Simulation& sim) : sim_(sim) {}
  void on_event(uint32_t tag, uint32_t gen) override {
    if (tag >= 1000) {
      if (!timer.fire(sim_.scheduler(), this, tag, gen)) return;
    }
    fired.push_back({sim_.now(), tag});
  }
  struct Fired {
    Time at;
    uint32_t tag;
  };
  std::vector<Fired> fired;
  Timer timer;

 private:
  Simulation& sim_;
};

TEST(Scheduler, PopsInTimeOrder) {
  Scheduler s;
  Simulation sim(1);
  Recorder r(sim);  // target only; never called here
  const int64_t times[] = {50, 10, 40, 30, 20, 70, 60, 0, 90, 80};
  for (int i = 0; i < 10; ++i) s.schedule(Time::ps(times[i]), &r, static_cast<uint32_t>(i));
  int64_t last = -1;
  for (int i = 0; i < 10; ++i) {
    const Event e = s.pop();
    EXPECT_GT(e.time().ps(), last);
    last = e.time().ps();
  }
  EXPECT_TRUE(s.empty());
}

TEST(Scheduler, TiesBreakInSchedulingOrder) {
  Simulation sim(1);
  Recorder r(sim);
  for (uint32_t i = 0; i < 100; ++i) sim.schedule(5_us, &r, i);
  sim.schedule(1_us, &r, 500);
  sim.run();
  ASSERT_EQ(r.fired.size(), 101U);
  EXPECT_EQ(r.fired[0].tag, 500U);
  for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(r.fired[i + 1].tag, i);
}

TEST(Scheduler, ManyRandomEventsComeOutSorted) {
  Scheduler s;
  Simulation sim(1);
  Recorder r(sim);
  Rng rng(7, 0);
  for (int i = 0; i < 10000; ++i)
    s.schedule(Time::ps(static_cast<int64_t>(rng.below(1000))), &r, 0);
  Event prev = s.pop();
  while (!s.empty()) {
    const Event e = s.pop();
    ASSERT_TRUE(prev.time() < e.time() || (prev.time() == e.time() && prev.seq() < e.seq()));
    prev = e;
  }
}

TEST(Scheduler, PopAndRescheduleKeepsOrderWithSeveralOrNoReschedules) {
  Scheduler s;
  Simulation sim(1);
  Recorder r(sim);
  Rng rng(3, 0);
  for (int i = 0; i < 500; ++i) s.schedule(Time::ps(static_cast<int64_t>(rng.below(1000))), &r, 0);
  Event prev = s.pop();
  int64_t now = prev.time().ps();
  for (int i = 0; i < 5000 && !s.empty(); ++i) {
    const Event e = s.pop();
    ASSERT_TRUE(prev.time() < e.time() || (prev.time() == e.time() && prev.seq() < e.seq()));
    now = e.time().ps();
    // 0, 1 or 2 new events, never earlier than now (as a handler would).
    const uint64_t k = rng.below(3);
    for (uint64_t j = 0; j < k && i < 4000; ++j) {
      s.schedule(Time::ps(now + static_cast<int64_t>(rng.below(50))), &r, 0);
    }
    prev = e;
  }
}

// The wheel, its current bucket, the span wheel and the far heap against a plain ordered set
// of (time, seq): events a few ps ahead (into the bucket being run), within the window, beyond
// it (the span wheel, moved into the wheel as the window takes in their span), beyond the span
// wheel (the far heap, moved as the span wheel reaches them), after a gap with the wheel empty
// (the window jumps to a span, or to a far event), at the same time as others, and earlier
// than the last event taken (allowed outside a simulation).
TEST(Scheduler, MatchesAnOrderedSetAcrossTheWheelTheCurrentBucketTheSpansAndTheFarHeap) {
  Scheduler s;
  Simulation sim(1);
  Recorder r(sim);
  Rng rng(11, 0);
  std::set<std::pair<int64_t, uint64_t>> ref;
  const int64_t window = static_cast<int64_t>(Scheduler::kBuckets) << Scheduler::kBucketShift;
  const int64_t spans = static_cast<int64_t>(Scheduler::kSpans) << Scheduler::kSpanShift;
  auto add = [&](int64_t at) {
    ref.insert({at, s.scheduled()});
    s.schedule(Time::ps(at), &r, 0);
  };
  int64_t now = 0;
  for (int i = 0; i < 200; ++i) add(static_cast<int64_t>(rng.below(3 * window)));
  uint64_t popped = 0;
  while (!s.empty()) {
    ASSERT_FALSE(ref.empty());
    const Event& top = s.top();
    ASSERT_EQ(top.at, ref.begin()->first);
    const Event e = s.pop();
    ASSERT_EQ(e.at, ref.begin()->first);
    ASSERT_EQ(e.sequence, ref.begin()->second);
    ref.erase(ref.begin());
    now = e.at;
    ++popped;
    if (popped > 20000) continue;  // then drain
    switch (rng.below(11)) {
      case 0:
        add(now);
        break;  // same time
      case 1:
        add(now + static_cast<int64_t>(rng.below(600)));
        break;  // this bucket
      case 2:
        add(now + static_cast<int64_t>(rng.below(window)));
        break;  // the wheel
      case 3:
        add(now + window + static_cast<int64_t>(rng.below(window)));
        break;  // far
      case 4:
        add(now + 50 * window + static_cast<int64_t>(rng.below(99)));
        break;  // a gap
      case 5:
        add(now > 1000 ? now - static_cast<int64_t>(rng.below(1000)) : 0);
        break;  // past
      case 6:
        add(now + 1000);
        add(now + 1000);
        break;  // a tie
      case 7:
        add(now + window + static_cast<int64_t>(rng.below(spans)));
        break;  // the span wheel
      case 8:
        add(now + spans + window + static_cast<int64_t>(rng.below(spans)));
        break;  // beyond it
      case 9:
        add(now + 3 * spans + static_cast<int64_t>(rng.below(99)));
        break;  // a gap past the span wheel
      default:
        break;
    }
  }
  EXPECT_TRUE(ref.empty());
  EXPECT_GT(popped, 20000U);
}

// Pops every event: their tags and times, in the order they ran.
std::pair<std::vector<uint32_t>, std::vector<int64_t>> drain(Scheduler& s) {
  std::vector<uint32_t> order;
  std::vector<int64_t> times;
  while (!s.empty()) {
    const Event e = s.pop();
    order.push_back(e.tag);
    times.push_back(e.at);
  }
  return {order, times};
}

// With the wheel empty the window jumps to the first span that holds events, whose first event
// may be late in the span, or to the far heap's earliest event; events scheduled after a jump,
// into the window, a later span or the far heap, still run in (time, scheduling) order.
TEST(Scheduler, AnEmptyWheelJumpsToTheFirstSpanWithEventsOrToTheFarHeap) {
  Simulation sim(1);
  Recorder r(sim);
  Scheduler& s = sim.scheduler();
  const int64_t window = static_cast<int64_t>(Scheduler::kBuckets) << Scheduler::kBucketShift;
  const int64_t span = int64_t{1} << Scheduler::kSpanShift;
  const int64_t spans = static_cast<int64_t>(Scheduler::kSpans) << Scheduler::kSpanShift;
  s.schedule(Time::ps(window + 5 * span + span - 3), &r, 0);  // late in a span
  s.schedule(Time::ps(window + 5 * span + 7), &r, 1);         // early in the same span
  s.schedule(Time::ps(window + 9 * span), &r, 2);             // a later span
  s.schedule(Time::ps(3 * spans), &r, 3);                     // the far heap
  s.schedule(Time::ps(3 * spans), &r, 4);                     // tied with it
  EXPECT_EQ(s.pop().tag, 1U);  // the jump lands on the span's first event, not its start
  s.schedule(Time::ps(window + 5 * span + 100), &r, 5);  // within the window now
  s.schedule(Time::ps(window + 9 * span), &r, 6);        // tied with tag 2, in its span
  s.schedule(Time::ps(3 * spans - 1), &r, 7);            // just before the far events
  const auto [order, times] = drain(s);
  EXPECT_EQ(order, (std::vector<uint32_t>{5, 0, 2, 6, 7, 3, 4}));
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
}

// top_up() jumps to the bucket that the last load found next (Scheduler::next_rel_), which
// link_bucket() lowers when an earlier bucket gets an event. Past the wheel's first lap, with
// the wheel emptied and refilled from the span wheel, events linked after a load into the next
// bucket, into an earlier one than the one found, and on both sides of the wheel's wrap (slots
// 8191 and 0) run in time order. A distance kept without the wrap's mask, off by one, or not
// lowered, runs them out of order or jumps past an event.
TEST(Scheduler, TheNextBucketFoundAtALoadFollowsLaterLinksAndTheWheelsWrap) {
  Simulation sim(1);
  Recorder r(sim);
  Scheduler& s = sim.scheduler();
  constexpr int64_t kBucket = int64_t{1} << Scheduler::kBucketShift;
  constexpr auto kBuckets = static_cast<int64_t>(Scheduler::kBuckets);
  const int64_t first = 20000;  // beyond the first window: the current bucket is past a lap
  s.schedule(Time::ps(first * kBucket), &r, 0);
  ASSERT_EQ(s.pop().tag, 0U);           // the wheel is empty now
  const int64_t behind = first + 5000;  // its slot (424) lies behind the current one (3616)
  s.schedule(Time::ps(behind * kBucket), &r, 1);
  ASSERT_EQ(s.pop().tag, 1U);
  const int64_t d = behind + 3 * kBuckets;  // beyond the window: through the span wheel
  s.schedule(Time::ps(d * kBucket), &r, 2);
  ASSERT_EQ(s.pop().tag, 2U);
  const int64_t to_wrap = kBuckets - (d % kBuckets);          // buckets from d to the next slot 0
  s.schedule(Time::ps((d + to_wrap + 10) * kBucket), &r, 3);  // after the wrap
  s.schedule(Time::ps((d + 100) * kBucket), &r, 4);           // earlier, linked later
  s.schedule(Time::ps((d + 1) * kBucket + 7), &r, 5);         // the very next bucket
  s.schedule(Time::ps((d + to_wrap - 1) * kBucket), &r, 6);   // slot 8191
  s.schedule(Time::ps((d + to_wrap) * kBucket), &r, 7);       // slot 0
  std::vector<uint32_t> order;
  while (!s.empty()) {
    const Event e = s.pop();
    order.push_back(e.tag);
    if (e.tag == 5) s.schedule(Time::ps((d + 2) * kBucket), &r, 8);  // right after a load
  }
  EXPECT_EQ(order, (std::vector<uint32_t>{5, 8, 4, 6, 7, 3}));
}

// The scheduler keeps a few events sorted ahead by loading the next bucket before the current
// one runs dry (core/scheduler.h). Events scheduled afterwards into the span it now covers,
// between the merged buckets, before them, or tied with one of them, still run in (time,
// scheduling) order.
TEST(Scheduler, EventsScheduledBetweenMergedBucketsKeepTheirOrder) {
  Simulation sim(1);
  Recorder r(sim);
  Scheduler& s = sim.scheduler();
  s.schedule(Time::ps(0), &r, 0);
  s.schedule(Time::ps(5000), &r, 1);    // bucket 9
  s.schedule(Time::ps(10000), &r, 2);   // bucket 19
  s.schedule(Time::ps(20000), &r, 3);   // bucket 39
  s.schedule(Time::ps(900000), &r, 4);  // far along the wheel
  EXPECT_EQ(s.pop().tag, 0U);           // buckets 9 (and on) join the current events
  s.schedule(Time::ps(7000), &r, 5);    // between two merged buckets
  s.schedule(Time::ps(3000), &r, 6);    // before all of them
  s.schedule(Time::ps(10000), &r, 7);   // tied with tag 2, scheduled later
  s.schedule(Time::ps(20000), &r, 8);   // tied with tag 3
  const auto [order, times] = drain(s);
  EXPECT_EQ(order, (std::vector<uint32_t>{6, 1, 5, 2, 7, 3, 8, 4}));
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
}

// A handler that schedules many events at the current time (a collective step starting every
// transfer at once) and a few more into the bucket being run: they run after the events of
// the bucket that are earlier, in scheduling order among equal times, and interleaved with the
// bucket's later events by time.
TEST(Scheduler, ABurstIntoTheCurrentBucketRunsInTimeThenSchedulingOrder) {
  Simulation sim(1);
  Recorder r(sim);
  Scheduler& s = sim.scheduler();
  s.schedule(Time::ps(100), &r, 0);
  s.schedule(Time::ps(300), &r, 1);  // same 512-ps bucket
  s.schedule(Time::ps(450), &r, 2);
  ASSERT_EQ(s.pop().tag, 0U);  // now = 100 ps; 300 and 450 are loaded
  constexpr uint32_t kBurst = 20000;
  for (uint32_t i = 0; i < kBurst; ++i) s.schedule(Time::ps(100), &r, 10 + i);
  s.schedule(Time::ps(300), &r, 5);  // tied with tag 1, scheduled later
  s.schedule(Time::ps(200), &r, 6);  // between the burst and tag 1
  EXPECT_EQ(s.top().tag, 10U);
  std::vector<uint32_t> order;
  while (!s.empty()) order.push_back(s.pop().tag);
  ASSERT_EQ(order.size(), kBurst + 4);
  for (uint32_t i = 0; i < kBurst; ++i) ASSERT_EQ(order[i], 10 + i) << i;
  EXPECT_EQ(std::vector<uint32_t>(order.begin() + kBurst, order.end()),
            (std::vector<uint32_t>{6, 1, 5, 2}));
}

// The events loaded ahead live in one array, each bucket written just below the ones before
// (core/scheduler.h). Five events stay loaded ahead while a long run of small buckets walks the
// array down, so the block moves back up many times; a bucket of 700 events joining them makes
// it grow; buckets of a few events scheduled out of time order are sorted as they load. The
// order stays (time, scheduling) throughout.
TEST(Scheduler, TheCurrentEventsMoveAndGrowWithoutChangingTheirOrder) {
  Simulation sim(1);
  Recorder r(sim);
  Scheduler& s = sim.scheduler();
  constexpr int64_t kBucket = int64_t{1} << Scheduler::kBucketShift;
  uint32_t tag = 0;
  std::vector<int64_t> at_of;  // by tag
  auto add = [&](int64_t at) {
    at_of.push_back(at);
    s.schedule(Time::ps(at), &r, tag++);
  };
  for (int i = 0; i < 6; ++i) add((1 + i * 3) * kBucket);  // six buckets of one
  for (int i = 0; i < 5; ++i) add(kBucket + 5 - i);        // five more in the first, late first
  std::vector<uint32_t> order;
  auto take = [&]() {
    const Event e = s.pop();
    ASSERT_TRUE(order.empty() || e.at > at_of[order.back()] ||
                (e.at == at_of[order.back()] && e.tag > order.back()))
        << "tag " << e.tag << " at " << e.at << " after tag " << order.back();
    order.push_back(e.tag);
  };
  for (int step = 0; step < 5000; ++step) {
    take();
    const int64_t now = at_of[order.back()];
    add(now + 18 * kBucket);  // each event again, 18 buckets later
    if (step % 50 == 7) {     // a bucket of 9, scheduled out of time order (and one tie)
      for (int k = 0; k < 9; ++k) add(now + 30 * kBucket + (k * 4 % 9) * 50);
      add(now + 30 * kBucket + 100);
    }
    if (step == 3000) {  // 700 events into one bucket, in pairs of a tie, latest pair first
      for (int k = 0; k < 700; ++k) add(now + 40 * kBucket - k / 2);
    }
  }
  while (!s.empty()) take();
  EXPECT_EQ(order.size(), tag);
}

TEST(Timer, CancelIsLazyAndIgnored) {
  Simulation sim(1);
  Recorder r(sim);
  r.timer.arm(sim.scheduler(), &r, 1000, 3_us);
  r.timer.cancel();
  EXPECT_FALSE(r.timer.armed());
  EXPECT_EQ(sim.scheduler().size(), 1U);  // still in the heap, lazily
  sim.run();
  EXPECT_TRUE(r.fired.empty());
}

TEST(Timer, RearmFiresOnlyTheLatest) {
  Simulation sim(1);
  Recorder r(sim);
  r.timer.arm(sim.scheduler(), &r, 1000, 3_us);
  r.timer.arm(sim.scheduler(), &r, 1000, 7_us);
  r.timer.arm(sim.scheduler(), &r, 1000, 5_us);
  sim.run();
  ASSERT_EQ(r.fired.size(), 1U);
  EXPECT_EQ(r.fired[0].at, 5_us);
  EXPECT_FALSE(r.timer.armed());
}

TEST(Timer, LaterDeadlinesReuseOnePendingEntry) {
  Simulation sim(1);
  Recorder r(sim);
  for (int i = 1; i <= 1000; ++i) r.timer.arm(sim.scheduler(), &r, 1000, Time::us(i));
  EXPECT_EQ(sim.scheduler().size(), 1U);  // one entry, at 1 us, carrying the latest deadline
  sim.run();
  ASSERT_EQ(r.fired.size(), 1U);
  EXPECT_EQ(r.fired[0].at, 1000_us);
  EXPECT_EQ(sim.events(), 2U);  // the 1 us entry re-scheduled itself once
}

TEST(Timer, CancelThenRearmEarlierFiresOnce) {
  Simulation sim(1);
  Recorder r(sim);
  r.timer.arm(sim.scheduler(), &r, 1000, 10_us);
  r.timer.cancel();
  r.timer.arm(sim.scheduler(), &r, 1000, 4_us);
  sim.run();
  ASSERT_EQ(r.fired.size(), 1U);
  EXPECT_EQ(r.fired[0].at, 4_us);
}

TEST(Simulation, RunStopsAtLimitAndResumes) {
  Simulation sim(1);
  Recorder r(sim);
  sim.schedule(1_us, &r, 1);
  sim.schedule(2_us, &r, 2);
  sim.schedule(3_us, &r, 3);
  EXPECT_EQ(sim.run(2_us), 2U);
  EXPECT_EQ(sim.now(), 2_us);
  EXPECT_EQ(sim.run(), 1U);
  EXPECT_EQ(sim.events(), 3U);
}

// The arena hands out whole cache lines back to back from 64 KiB blocks; an ArenaPtr runs the
// destructor; an object larger than a block gets a block of its own.
TEST(LineArena, LinesBackToBackAndDestructorsRun) {
  struct Obj {
    int* alive;
    char pad[100];
    explicit Obj(int* a) : alive(a) { ++*alive; }
    ~Obj() { --*alive; }
  };
  LineArena arena;
  int alive = 0;
  {
    ArenaPtr<Obj> a = arena.make<Obj>(&alive);
    ArenaPtr<Obj> b = arena.make<Obj>(&alive);
    EXPECT_EQ(alive, 2);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.get()) % LineArena::kLine, 0U);
    EXPECT_EQ(reinterpret_cast<char*>(b.get()) - reinterpret_cast<char*>(a.get()), 128);  // 108 B
    EXPECT_EQ(arena.blocks(), 1U);
  }
  EXPECT_EQ(alive, 0);
  for (int i = 0; i < 510; ++i) arena.allocate(128);  // 2 + 510 objects of 128 B fill the block
  EXPECT_EQ(arena.blocks(), 1U);
  void* next = arena.allocate(1);
  EXPECT_EQ(arena.blocks(), 2U);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(next) % LineArena::kLine, 0U);
  arena.allocate(3 * LineArena::kBlock);  // its own block
  EXPECT_EQ(arena.blocks(), 3U);
}

// The ring allocates on the first push (two slots), doubles when full, and keeps FIFO order
// across a wrap-around and a growth; back() and pop_back() take from the tail.
TEST(Ring, GrowsFromTwoSlotsAndKeepsOrderAcrossWrapAndGrowth) {
  Ring<int> r;
  EXPECT_EQ(r.capacity(), 0U);
  r.push_back(1);
  EXPECT_EQ(r.capacity(), 2U);
  r.push_back(2);
  r.pop_front();
  r.push_back(3);  // wraps: slots hold 3, 2
  EXPECT_EQ(r.capacity(), 2U);
  r.push_back(4);  // full: grows to 4 and unwraps
  r.push_back(5);
  EXPECT_EQ(r.capacity(), 4U);
  ASSERT_EQ(r.size(), 4U);
  for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(r[i], static_cast<int>(i) + 2);
  EXPECT_EQ(r.back(), 5);
  r.pop_back();
  EXPECT_EQ(r.back(), 4);
  std::vector<int> out;
  while (!r.empty()) {
    out.push_back(r.front());
    r.pop_front();
  }
  EXPECT_EQ(out, (std::vector<int>{2, 3, 4}));
}

// insert() places an element before position i across a wrap-around (a sorted insert, as a
// RoCE receiver keeps its message ends) and appends at i = size().
TEST(Ring, InsertPlacesBeforeThePositionAcrossAWrap) {
  Ring<int> r;
  for (int v : {0, 10, 20, 30}) r.push_back(v);
  r.pop_front();
  r.pop_front();
  r.push_back(40);  // capacity 4, wrapped: 20, 30, 40
  r.insert(1, 25);  // 20, 25, 30, 40, across the wrap
  r.insert(0, 15);
  r.insert(r.size(), 50);  // full: grows, then appends
  std::vector<int> out;
  for (size_t i = 0; i < r.size(); ++i) out.push_back(r[i]);
  EXPECT_EQ(out, (std::vector<int>{15, 20, 25, 30, 40, 50}));
  EXPECT_EQ(r.front(), 15);
  EXPECT_EQ(r.back(), 50);
}

TEST(PacketPool, ReusesAndCountsLive) {
  PacketPool pool;
  Packet* a = pool.acquire();
  Packet* b = pool.acquire();
  EXPECT_EQ(pool.live(), 2U);
  EXPECT_NE(a->uid, b->uid);
  a->seq = 99;
  pool.release(a);
  EXPECT_EQ(pool.live(), 1U);
  Packet* c = pool.acquire();
  EXPECT_EQ(c, a);        // the freed packet is reused
  EXPECT_EQ(c->seq, 0U);  // and reset
  pool.release(b);
  pool.release(c);
  EXPECT_EQ(pool.live(), 0U);
}

TEST(PacketPool, ProtocolAreaRoundTrips) {
  Packet p;
  p.set_ext(PfcInfo{5, 1234});
  const auto info = p.get_ext<PfcInfo>();
  EXPECT_EQ(info.cls, 5);
  EXPECT_EQ(info.quanta, 1234);
}

TEST(Histogram, ExactNearestRankPercentiles) {
  Histogram h;
  for (int i = 100; i >= 1; --i) h.add(i);
  EXPECT_EQ(h.percentile(50), 50);
  EXPECT_EQ(h.percentile(99), 99);
  EXPECT_EQ(h.percentile(99.5), 100);
  EXPECT_EQ(h.min(), 1);
  EXPECT_EQ(h.max(), 100);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
  Histogram small;
  small.add(7);
  small.add(3);
  small.add(5);
  EXPECT_EQ(small.percentile(50), 5);
  EXPECT_EQ(small.percentile(34), 5);
  EXPECT_EQ(small.percentile(33), 3);
}

TEST(Rng, StreamsAreReproducibleAndIndependent) {
  Rng a(42, 1);
  Rng b(42, 1);
  Rng c(42, 2);
  Rng d(43, 1);
  int same_c = 0;
  int same_d = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    same_c += x == c.next();
    same_d += x == d.next();
  }
  EXPECT_EQ(same_c, 0);
  EXPECT_EQ(same_d, 0);
  Rng u(1, 1);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t k = u.below(10);
    ASSERT_LT(k, 10U);
    sum += u.uniform();
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

}  // namespace
}  // namespace fabsim
