// Link loss models (docs/FAULTS.md "Loss models", issue 15 item 3): the Gilbert-Elliott chain
// to the exact frame where it is deterministic and against the same draws replayed from the
// link's stream; its loss rate and burst length against the closed forms; Bernoulli's draws
// unchanged; the scope key; the loader's errors; and the ledger under bursty loss.
#include <gtest/gtest.h>

#include <fmt/format.h>  // scenario text

#include <string>   // scenarios
#include <utility>  // scope table
#include <vector>   // scope table

#include "conserved.h"
#include "helpers.h"
#include "net/link.h"
#include "net/network.h"
#include "net/switch.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {

constexpr uint64_t kLinkIndex = 3;

// One link whose frames are injected into the ledger, so its drops are counted by cause.
struct OneLink {
  explicit OneLink(uint64_t seed) : sim(seed), sink(sim), link(sim, {}, &sink, 0, kLinkIndex) {}
  /// Offers one frame; returns whether the link's loss model lost it.
  bool offer(PacketType type = PacketType::kData, uint32_t size = 1000) {
    Packet* p = sim.pool().acquire();
    p->type = type;
    p->size = size;
    p->payload = size;
    sim.ledger().inject(*p);
    const uint64_t before = link.lost() + link.burst_lost();
    link.transmit(p);
    return link.lost() + link.burst_lost() != before;
  }
  Simulation sim;
  test::CountingNode sink;
  Link link;
};

// ---- exact state ------------------------------------------------------------------------------

TEST(GilbertElliott, AlternatesWhenBothTransitionsAreCertain) {
  // p = r = 1, h = 1, k = 0: the chain starts good and flips after every frame, so frames
  // 2, 4, 6, ... are lost and no other; every draw has probability 0 or 1, whatever the seed.
  for (uint64_t seed : {1U, 2U, 99U}) {
    OneLink l(seed);
    l.link.set_loss(LossModel::gilbert(1, 1));
    for (int i = 1; i <= 1000; ++i) {
      ASSERT_EQ(l.link.loss_bad_state(), i % 2 == 0) << "before frame " << i;
      ASSERT_EQ(l.offer(), i % 2 == 0) << "frame " << i;
      ASSERT_EQ(l.link.loss_bad_state(), i % 2 == 1) << "after frame " << i;
    }
    l.sim.run();
    EXPECT_EQ(l.link.burst_lost(), 500U);
    EXPECT_EQ(l.link.lost(), 0U);  // random (Bernoulli) losses are counted apart
    EXPECT_EQ(l.sink.received, 500U);
    const LedgerReport r = l.sim.ledger().close(l.sim.pool());
    const ClassLedger t = r.total();
    EXPECT_EQ(t.dropped[static_cast<int>(DropCause::kBurstLoss)], (Tally{500, 500'000}));
    EXPECT_EQ(t.dropped[static_cast<int>(DropCause::kRandomLoss)], Tally{});
    EXPECT_EQ(l.sim.pool().live(), 0U);
  }
}

TEST(GilbertElliott, LossInTheGoodStateOnly) {
  // k = 1, h = 0: the good state loses, so frames 1, 3, 5, ... are lost.
  OneLink l(5);
  l.link.set_loss(LossModel::gilbert(1, 1, /*loss_bad=*/0, /*loss_good=*/1));
  for (int i = 1; i <= 10; ++i) EXPECT_EQ(l.offer(), i % 2 == 1) << "frame " << i;
  l.sim.run();
  EXPECT_EQ(l.link.burst_lost(), 5U);
}

TEST(GilbertElliott, PfcFramesAreExemptAndDoNotStepTheChain) {
  OneLink l(1);
  l.link.set_loss(LossModel::gilbert(1, 1));
  EXPECT_FALSE(l.offer());  // good -> bad
  EXPECT_TRUE(l.link.loss_bad_state());
  EXPECT_FALSE(l.offer(PacketType::kPfc));
  EXPECT_TRUE(l.link.loss_bad_state());    // unchanged
  EXPECT_TRUE(l.offer(PacketType::kAck));  // control frames are lost like data; bad -> good
  EXPECT_FALSE(l.link.loss_bad_state());
  l.sim.run();
  EXPECT_EQ(l.link.burst_lost(), 1U);
  EXPECT_EQ(l.sink.received, 2U);
}

TEST(GilbertElliott, NeverLeavingTheGoodStateLosesNothing) {
  OneLink l(1);
  l.link.set_loss(LossModel::gilbert(0, 0.5));
  EXPECT_FALSE(l.link.loss().active());
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(l.offer());
  EXPECT_FALSE(l.link.loss_bad_state());
  l.sim.run();
  EXPECT_EQ(l.sink.received, 100U);
}

TEST(GilbertElliott, SetLossRestartsInTheGoodState) {
  OneLink l(1);
  l.link.set_loss(LossModel::gilbert(1, 1));
  l.offer();
  EXPECT_TRUE(l.link.loss_bad_state());
  l.link.set_loss(LossModel::gilbert(1, 1));
  EXPECT_FALSE(l.link.loss_bad_state());
  l.sim.run();
}

// With a random chain, the link's decisions are exactly the chain replayed from its stream:
// per frame the loss draw in the current state, then the transition draw.
TEST(GilbertElliott, DrawsAreTheChainReplayedFromTheLinksStream) {
  const LossModel m = LossModel::gilbert(0.1, 0.3, 0.8, 0.02);
  OneLink l(17);
  l.link.set_loss(m);
  Rng ref = l.sim.rng(stream_id(StreamKind::kLink, kLinkIndex));
  bool bad = false;
  for (int i = 0; i < 5000; ++i) {
    const bool lost = ref.bernoulli(bad ? m.loss_bad : m.loss_good);
    bad = bad ? !ref.bernoulli(m.r) : ref.bernoulli(m.p);
    ASSERT_EQ(l.offer(), lost) << "frame " << i;
    ASSERT_EQ(l.link.loss_bad_state(), bad) << "after frame " << i;
  }
  l.sim.run();
}

// Bernoulli makes the one draw per non-PFC frame it made before loss models existed, so every
// scenario with network.loss_probability keeps its figures (tests/golden).
TEST(BernoulliLoss, OneDrawPerFrameFromTheLinksStream) {
  OneLink l(23);
  l.link.set_loss(LossModel::bernoulli(0.3));
  Rng ref = l.sim.rng(stream_id(StreamKind::kLink, kLinkIndex));
  uint64_t lost = 0;
  for (int i = 0; i < 5000; ++i) {
    if (i % 7 == 0) {
      ASSERT_FALSE(l.offer(PacketType::kPfc));  // no draw
      continue;
    }
    const bool expect = ref.bernoulli(0.3);
    lost += expect ? 1 : 0;
    ASSERT_EQ(l.offer(), expect) << "frame " << i;
  }
  l.sim.run();
  EXPECT_EQ(l.link.lost(), lost);
  EXPECT_EQ(l.link.burst_lost(), 0U);
}

TEST(LossModel, MeanLossIsTheStationaryMix) {
  EXPECT_DOUBLE_EQ(LossModel::bernoulli(0.01).mean_loss(), 0.01);
  EXPECT_DOUBLE_EQ(LossModel::gilbert(0.05, 0.25).mean_loss(), 0.05 / 0.3);
  EXPECT_DOUBLE_EQ(LossModel::gilbert(0.05, 0.25, 0.5, 0.01).mean_loss(),
                   (0.25 * 0.01 + 0.05 * 0.5) / 0.3);
}

// ---- statistics -------------------------------------------------------------------------------

struct Measured {
  double loss_rate = 0;
  double mean_burst = 0;  // mean run of consecutive lost frames
  uint64_t bursts = 0;
};

Measured measure(const LossModel& m, int frames, uint64_t seed) {
  OneLink l(seed);
  l.link.set_loss(m);
  uint64_t lost = 0;
  uint64_t bursts = 0;
  bool prev = false;
  for (int i = 0; i < frames; ++i) {
    const bool now = l.offer();
    lost += now ? 1 : 0;
    if (now && !prev) ++bursts;
    prev = now;
    if (i % 4096 == 0) l.sim.run();  // deliver what is on the wire (bounded pool)
  }
  l.sim.run();
  EXPECT_EQ(l.link.burst_lost(), lost);
  EXPECT_EQ(l.sink.received + lost, static_cast<uint64_t>(frames));
  return {static_cast<double>(lost) / frames,
          static_cast<double>(lost) / static_cast<double>(bursts), bursts};
}

// p = 0.05, r = 0.25, h = 1, k = 0: a good stay of mean 20 frames, a bad one of 4, so about
// 500k / 24 = 20800 bursts. Per cycle, lost - pi x frames has sd 4.3 frames (geometric stays),
// so the measured rate has a relative sd of about 0.75 %, the mean burst about 0.6 %: a 3 %
// bound is 4 sigma or more.
TEST(GilbertElliott, LossRateAndBurstLengthMatchTheClosedForms) {
  const LossModel m = LossModel::gilbert(0.05, 0.25);
  const Measured got = measure(m, 500'000, 11);
  EXPECT_GT(got.bursts, 18'000U);
  EXPECT_NEAR(got.loss_rate / ((0.25 * 0 + 0.05 * 1) / (0.05 + 0.25)), 1.0, 0.03);
  EXPECT_NEAR(got.mean_burst / (1 / 0.25), 1.0, 0.03);
}

TEST(GilbertElliott, LossRateWithPartialLossInBothStates) {
  const LossModel m = LossModel::gilbert(0.05, 0.25, /*loss_bad=*/0.5, /*loss_good=*/0.01);
  const Measured got = measure(m, 500'000, 12);
  EXPECT_NEAR(got.loss_rate / m.mean_loss(), 1.0, 0.03);
}

// ---- scenarios --------------------------------------------------------------------------------

// Two leaves of two hosts and two spines, a RoCE permutation: every role carries data and ACKs.
std::string lossy(const std::string& loss) {
  return R"(
[topology]
kind = "leaf_spine"
servers = 2
gpus_per_server = 2
spines = 2
[transport]
kind = "roce"
[workload]
kind = "permutation"
bytes = "1MB"
)" + loss;
}

TEST(LinkRole, NetworkConnectTagsEveryLink) {
  const ScenarioConfig cfg = load_scenario_text(lossy(""), "roles.toml", {});
  fabsim::Run run(cfg);
  int count[3] = {};
  for (const auto& link : run.network().links()) {
    const bool to_switch = dynamic_cast<const Switch*>(link->dst()) != nullptr;
    const LinkRole role = link->role();
    ++count[static_cast<int>(role)];
    EXPECT_EQ(to_switch, role != LinkRole::kHostDown);
  }
  EXPECT_EQ(count[static_cast<int>(LinkRole::kHostUp)], 4);
  EXPECT_EQ(count[static_cast<int>(LinkRole::kHostDown)], 4);
  EXPECT_EQ(count[static_cast<int>(LinkRole::kFabric)], 8);  // 2 leaves x 2 spines, duplex
}

// Each scope loses only on its links, every loss is a burst_loss in the ledger, and the ledger
// balances.
TEST(LossScope, OnlyTheChosenLinksLose) {
  const std::vector<std::pair<std::string, LossScope>> scopes = {
      {"host_up", LossScope::kHostUp},
      {"host_down", LossScope::kHostDown},
      {"hosts", LossScope::kHosts},
      {"fabric", LossScope::kFabric},
      {"all", LossScope::kAll}};
  for (const auto& [name, scope] : scopes) {
    SCOPED_TRACE(name);
    const ScenarioConfig cfg = load_scenario_text(
        lossy("[network.loss]\nmodel = \"gilbert\"\np = 0.002\nr = 0.5\nlinks = \"" + name +
              "\"\n"),
        "scope.toml", {});
    ASSERT_EQ(cfg.network.loss_links, scope);
    fabsim::Run run(cfg);
    const RunResult r = execute_checked(run);
    EXPECT_TRUE(r.all_done);
    uint64_t by_role[3] = {};
    for (const auto& link : run.network().links()) {
      by_role[static_cast<int>(link->role())] += link->burst_lost();
      EXPECT_EQ(link->lost(), 0U);
    }
    for (const LinkRole role : {LinkRole::kHostUp, LinkRole::kHostDown, LinkRole::kFabric}) {
      if (in_scope(scope, role)) {
        EXPECT_GT(by_role[static_cast<int>(role)], 0U) << "role " << static_cast<int>(role);
      } else {
        EXPECT_EQ(by_role[static_cast<int>(role)], 0U) << "role " << static_cast<int>(role);
      }
    }
    const ClassLedger t = r.ledger.total();
    EXPECT_EQ(t.dropped[static_cast<int>(DropCause::kBurstLoss)].packets, r.totals.link_losses);
    EXPECT_EQ(t.dropped[static_cast<int>(DropCause::kRandomLoss)].packets, 0U);
    EXPECT_EQ(t.dropped_total().packets, r.totals.link_losses);
  }
}

// The short form and the table's Bernoulli are the same model on the same links.
TEST(LossScope, BernoulliTableEqualsLossProbability) {
  const RunResult a =
      run_checked(load_scenario_text(lossy("[network]\nloss_probability = 0.005\n"), "a.toml", {}));
  const RunResult b =
      run_checked(load_scenario_text(lossy("[network.loss]\nprobability = 0.005\n"), "b.toml", {}));
  EXPECT_GT(a.totals.link_losses, 0U);
  EXPECT_EQ(a.totals.link_losses, b.totals.link_losses);
  EXPECT_EQ(a.end_time, b.end_time);
  EXPECT_EQ(a.ledger.total().dropped[static_cast<int>(DropCause::kRandomLoss)].packets,
            a.totals.link_losses);
}

// A RoCE (go-back-N) permutation on a single switch under bursty loss on every link: mean loss
// 0.2 % in bursts of 4; every flow completes and every lost packet is in the ledger.
TEST(LossScenario, RoceUnderGilbertLossCompletesBalanced) {
  const RunResult r = run_checked(load_scenario_text(R"(
[topology]
kind = "single_switch"
hosts = 4
[network.loss]
model = "gilbert"
p = 0.0005
r = 0.25
[transport]
kind = "roce"
[workload]
kind = "permutation"
bytes = "2MB"
)",
                                                     "roce.toml", {}));
  ASSERT_TRUE(r.all_done);
  const ClassLedger t = r.ledger.total();
  EXPECT_GT(t.dropped[static_cast<int>(DropCause::kBurstLoss)].packets, 5U);
  EXPECT_EQ(t.dropped[static_cast<int>(DropCause::kBurstLoss)].packets, r.totals.link_losses);
  EXPECT_GE(r.ledger.classes[3].delivered.bytes, 4U * 2'000'000U);
}

// ---- loader -----------------------------------------------------------------------------------

std::string error_of(const std::string& toml) {
  try {
    load_scenario_text(toml, "bad.toml", {});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LossLoader, ReadsTheGilbertModelAndScope) {
  const ScenarioConfig c = load_scenario_text(
      "[network.loss]\nmodel = \"gilbert\"\np = 0.01\nr = 0.2\nloss_bad = 0.9\nloss_good = "
      "0.001\nlinks = \"fabric\"\n",
      "ok.toml", {});
  EXPECT_EQ(c.network.loss.kind, LossModel::Kind::kGilbert);
  EXPECT_EQ(c.network.loss.p, 0.01);
  EXPECT_EQ(c.network.loss.r, 0.2);
  EXPECT_EQ(c.network.loss.loss_bad, 0.9);
  EXPECT_EQ(c.network.loss.loss_good, 0.001);
  EXPECT_EQ(c.network.loss_links, LossScope::kFabric);
  const ScenarioConfig d = load_scenario_text("[network]\nloss_probability = 0.02\n", "d.toml", {});
  EXPECT_EQ(d.network.loss.kind, LossModel::Kind::kBernoulli);
  EXPECT_EQ(d.network.loss.probability, 0.02);
  EXPECT_EQ(d.network.loss_links, LossScope::kAll);
}

// The effective scenario records only the keys of the chosen model, so given again (here its
// [network] block, written back as TOML) it loads to the same model.
TEST(LossLoader, EffectiveScenarioSaysTheLossOnceAndLoadsAgain) {
  auto again = [](const ScenarioConfig& c) {
    const nlohmann::ordered_json& net = c.effective["network"];
    std::string toml = "[network]\n";
    if (net.contains("loss_probability"))
      toml += fmt::format("loss_probability = {}\n", net["loss_probability"].dump());
    toml += "[network.loss]\n";
    for (const auto& [key, value] : net["loss"].items()) toml += key + " = " + value.dump() + "\n";
    return load_scenario_text(toml, "again.toml", {});
  };
  const ScenarioConfig top = load_scenario_text("[network]\nloss_probability = 0.02\n", "a", {});
  EXPECT_FALSE(top.effective["network"]["loss"].contains("probability"));
  EXPECT_EQ(again(top).network.loss.probability, 0.02);
  const ScenarioConfig none = load_scenario_text("", "b", {});
  EXPECT_FALSE(none.effective["network"].contains("loss_probability"));
  EXPECT_EQ(none.effective["network"]["loss"]["probability"], 0.0);
  EXPECT_FALSE(again(none).network.loss.active());
  const ScenarioConfig ge =
      load_scenario_text("[network.loss]\nmodel = \"gilbert\"\np = 0.01\nr = 0.2\n", "c", {});
  EXPECT_FALSE(ge.effective["network"]["loss"].contains("probability"));
  const ScenarioConfig ge2 = again(ge);
  EXPECT_EQ(ge2.network.loss.kind, LossModel::Kind::kGilbert);
  EXPECT_EQ(ge2.network.loss.p, 0.01);
  EXPECT_EQ(ge2.network.loss.r, 0.2);
  EXPECT_EQ(ge2.network.loss_links, LossScope::kAll);
}

TEST(LossLoader, ErrorsNameTheKey) {
  auto has = [](const std::string& e, const char* s) { return e.find(s) != std::string::npos; };
  std::string e = error_of("[network.loss]\nmodel = \"markov\"\n");
  EXPECT_TRUE(has(e, "network.loss.model")) << e;
  EXPECT_TRUE(has(e, "gilbert")) << e;
  e = error_of("[network.loss]\nmodel = \"gilbert\"\np = 0.01\nr = 0\n");
  EXPECT_TRUE(has(e, "network.loss.r")) << e;
  EXPECT_TRUE(has(e, "(0, 1]")) << e;
  e = error_of("[network.loss]\nmodel = \"gilbert\"\np = 1.5\n");
  EXPECT_TRUE(has(e, "network.loss.p")) << e;
  e = error_of("[network]\nloss_probability = 0.01\n[network.loss]\nprobability = 0.01\n");
  EXPECT_TRUE(has(e, "network.loss.probability")) << e;
  EXPECT_TRUE(has(e, "network.loss_probability")) << e;
  e = error_of("[network]\nloss_probability = 0.01\n[network.loss]\nmodel = \"gilbert\"\n");
  EXPECT_TRUE(has(e, "network.loss.model")) << e;
  EXPECT_TRUE(has(e, "network.loss_probability")) << e;
  e = error_of("[network.loss]\np = 0.01\n");  // a gilbert key with the bernoulli model
  EXPECT_TRUE(has(e, "network.loss.p")) << e;
  EXPECT_TRUE(has(e, "gilbert")) << e;
  e = error_of("[network.loss]\nmodel = \"gilbert\"\nprobability = 0.01\n");
  EXPECT_TRUE(has(e, "network.loss.probability")) << e;
  e = error_of("[network.loss]\nlinks = \"spines\"\n");
  EXPECT_TRUE(has(e, "network.loss.links")) << e;
  e = error_of("[network.loss]\nburst = 3\n");
  EXPECT_TRUE(has(e, "network.loss.burst")) << e;
}

}  // namespace
}  // namespace fabsim
