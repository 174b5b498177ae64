// Scenario loading: defaults, overrides, and errors that name the key.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>  // the scenario file of the --seed test
#include <string>

#include "scenario/scenario.h"

namespace fabsim {
namespace {
using namespace literals;

std::string error_of(const std::string& toml, const std::vector<std::string>& sets = {}) {
  try {
    load_scenario_text(toml, "bad.toml", sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// network.trim.size: 0 (all of the headers) or at least the smallest Ethernet frame.
TEST(Loader, ATrimmedSizeIsZeroOrAtLeastAnEthernetFrame) {
  EXPECT_EQ(load_scenario_text("", "t.toml").network.trim.size, Bytes());
  EXPECT_EQ(load_scenario_text("[network.trim]\nsize = \"64B\"\n", "t.toml").network.trim.size,
            Bytes(64));
  const std::string e = error_of("[network.trim]\nsize = \"24B\"\n");
  EXPECT_NE(e.find("network.trim.size"), std::string::npos) << e;
  EXPECT_NE(e.find("at least 64 B"), std::string::npos) << e;
}

TEST(Loader, DefaultsAndEffectiveScenario) {
  const auto c = load_scenario_text("", "empty.toml");
  EXPECT_EQ(c.topology.name(), "leaf_spine");
  EXPECT_EQ(c.topology.hosts(), 32);
  EXPECT_EQ(c.network.sw.buffer.size.count(), 32LL << 20);
  EXPECT_EQ(c.network.framing_bytes, 20);
  EXPECT_EQ(c.effective["topology"]["nic_rate"], "100Gbps");
  EXPECT_EQ(c.effective["network"]["ecn"]["kmin"], 5000);
  EXPECT_EQ(c.network.sw.max_frame_bytes, 4096 + 62);
}

// The switches' ECN defaults follow the transport (REFERENCE.md §4.7): UET's are 0.2 to 0.8 of
// one BDP with probability 1 at the top; any other kind keeps DCQCN's RED (5 kB to 200 kB, 1 %).
// An absolute threshold given with UET takes the absolute form; the two forms do not mix.
TEST(Loader, EcnDefaultsFollowTheTransport) {
  const auto uet = load_scenario_text("[transport]\nkind = \"uet\"\n", "uet.toml");
  EXPECT_EQ(uet.network.sw.ecn.kmin_bdp, 0.2);
  EXPECT_EQ(uet.network.sw.ecn.kmax_bdp, 0.8);
  EXPECT_EQ(uet.network.sw.ecn.pmax, 1.0);
  EXPECT_EQ(uet.effective["network"]["ecn"]["kmin_bdp"], 0.2);
  EXPECT_FALSE(uet.effective["network"]["ecn"].contains("kmin"));  // not the form in use
  const auto roce = load_scenario_text("[transport]\nkind = \"roce\"\n", "roce.toml");
  EXPECT_EQ(roce.network.sw.ecn.kmin_bdp, 0.0);
  EXPECT_EQ(roce.network.sw.ecn.kmin.count(), 5000);
  EXPECT_EQ(roce.network.sw.ecn.pmax, 0.01);
  const auto given = load_scenario_text(
      "[transport]\nkind = \"uet\"\n[network.ecn]\nkmax = \"100kB\"\n", "g.toml");
  EXPECT_EQ(given.network.sw.ecn.kmin_bdp, 0.0);
  EXPECT_EQ(given.network.sw.ecn.kmin.count(), 5000);
  EXPECT_EQ(given.network.sw.ecn.kmax.count(), 100000);
  EXPECT_EQ(given.network.sw.ecn.pmax, 1.0);
  const auto fractions =
      load_scenario_text("[network.ecn]\nkmin_bdp = 0.5\nkmax_bdp = 1.5\n", "f.toml");
  EXPECT_EQ(fractions.network.sw.ecn.kmax_bdp, 1.5);
  EXPECT_NE(error_of("[network.ecn]\nkmin_bdp = 0.5\nkmin = \"10kB\"\n").find("network.ecn.kmin"),
            std::string::npos);
  EXPECT_NE(
      error_of("[network.ecn]\nkmin_bdp = 0.5\nkmax_bdp = 0.5\n").find("network.ecn.kmax_bdp"),
      std::string::npos);
  EXPECT_NE(error_of("[network.ecn]\nkmax_bdp = 0.5\n").find("network.ecn.kmax_bdp"),
            std::string::npos);
  // kmin_bdp = 0 with UET asks for the absolute form: DCQCN's thresholds, UET's pmax.
  const auto zero =
      load_scenario_text("[transport]\nkind = \"uet\"\n[network.ecn]\nkmin_bdp = 0\n", "z.toml");
  EXPECT_EQ(zero.network.sw.ecn.kmax_bdp, 0.0);
  EXPECT_EQ(zero.network.sw.ecn.kmin.count(), 5000);
  // A reference rate scales absolute thresholds only; "0" (recorded when none) is accepted.
  EXPECT_NE(error_of("[transport]\nkind = \"uet\"\n[network.ecn]\nreference_rate = \"400Gbps\"\n")
                .find("network.ecn.reference_rate"),
            std::string::npos);
  EXPECT_EQ(load_scenario_text("[network.ecn]\nreference_rate = \"0\"\n", "r.toml")
                .network.sw.ecn.reference_rate.bps(),
            0);
}

// Giving the effective scenario's keys again runs the same scenario: UET's own header (102 B,
// not the common default of 62) is what is recorded, and the recorded empty sweep is accepted.
TEST(Loader, TheEffectiveScenarioCanBeGivenAgain) {
  const auto uet = load_scenario_text("[transport]\nkind = \"uet\"\n", "uet.toml");
  EXPECT_EQ(uet.effective["transport"]["header_bytes"], 102);
  const auto again = load_scenario_text(
      "[transport]\nkind = \"uet\"\nheader_bytes = 102\n[sweep]\nsizes = []\n", "again.toml");
  EXPECT_EQ(again.transport.wire.header_bytes, uet.transport.wire.header_bytes);
  EXPECT_TRUE(again.sweep.sizes.empty());
}

TEST(Loader, OverridesParseAsTomlOrString) {
  const auto c = load_scenario_text("", "x.toml",
                                    {"topology.uplink_rate=800Gbps", "network.pfc.enabled=false",
                                     "network.ecn.kmin=10KB", "topology.spines=3",
                                     "network.pfc.lossless_classes=[2, 3]"});
  EXPECT_EQ(c.topology.as<LeafSpineConfig>().uplink_rate, 800_Gbps);
  EXPECT_FALSE(c.network.sw.pfc.enabled);
  EXPECT_EQ(c.network.sw.ecn.kmin.count(), 10000);
  EXPECT_EQ(c.topology.as<LeafSpineConfig>().spines, 3);
  EXPECT_EQ(c.network.sw.pfc.lossless_mask, (1U << 2) | (1U << 3));
}

TEST(Loader, UnknownKeyIsNamed) {
  const auto e = error_of("[topology]\nspinez = 4\n");
  EXPECT_NE(e.find("bad.toml:2"), std::string::npos) << e;
  EXPECT_NE(e.find("topology.spinez"), std::string::npos) << e;
  EXPECT_NE(error_of("[nonsense]\n").find("'nonsense'"), std::string::npos);
}

TEST(Loader, BadUnitIsNamed) {
  const auto e = error_of("[topology]\nnic_rate = \"100GB\"\n");
  EXPECT_NE(e.find("topology.nic_rate"), std::string::npos) << e;
  EXPECT_NE(e.find("Gbps"), std::string::npos) << e;
  EXPECT_NE(error_of("[topology]\nhost_link_delay = \"3 parsecs\"\n").find("host_link_delay"),
            std::string::npos);
  EXPECT_NE(error_of("[network.buffer]\nsize = \"lots\"\n").find("network.buffer.size"),
            std::string::npos);
}

TEST(Loader, NegativeRateIsRejected) {
  const auto e = error_of("[topology]\nuplink_rate = \"-400Gbps\"\n");
  EXPECT_NE(e.find("topology.uplink_rate"), std::string::npos) << e;
  EXPECT_NE(e.find("positive"), std::string::npos) << e;
}

TEST(Loader, InconsistentTopologyIsNamed) {
  EXPECT_NE(error_of("[topology]\nservers = 2\nservers_per_leaf = 4\n").find("servers_per_leaf"),
            std::string::npos);
  EXPECT_NE(error_of("[topology]\nservers = 5\nservers_per_leaf = 2\n").find("topology.servers"),
            std::string::npos);
  EXPECT_NE(error_of("[topology]\nspines = 0\n").find("topology.spines"), std::string::npos);
  EXPECT_NE(error_of("[workload]\nkind = \"incast\"\nreceiver = 99\n").find("workload.receiver"),
            std::string::npos);
  EXPECT_NE(error_of("[workload]\nkind = \"incast\"\nsenders = 32\n").find("workload.senders"),
            std::string::npos);
  EXPECT_NE(error_of("[workload]\nkind = \"flows\"\n[[workload.flows]]\nsrc = 1\ndst = 1\n")
                .find("workload.flows[0]"),
            std::string::npos);
  EXPECT_NE(error_of("[network.ecn]\nkmin = \"300KB\"\n").find("network.ecn.kmax"),
            std::string::npos);
  EXPECT_NE(error_of("[network.pfc]\nthreshold = \"static\"\n").find("network.pfc.xoff"),
            std::string::npos);
}

TEST(Loader, WrongTypesAndChoices) {
  EXPECT_NE(error_of("[topology]\nkind = \"torus\"\n").find("leaf_spine"), std::string::npos);
  EXPECT_NE(error_of("[topology]\nservers = \"four\"\n").find("topology.servers"),
            std::string::npos);
  EXPECT_NE(error_of("[network.pfc]\nenabled = 1\n").find("true or false"), std::string::npos);
  EXPECT_NE(error_of("topology = 3\n").find("a table"), std::string::npos);
  EXPECT_NE(error_of("", {"novalue"}).find("key=value"), std::string::npos);
  EXPECT_NE(error_of("x = [\n").find("not valid TOML"), std::string::npos);
}

TEST(Loader, MissingFile) {
  try {
    load_scenario("/nonexistent/scenario.toml", {});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/scenario.toml"), std::string::npos);
  }
}

TEST(Loader, CatalogueListsEveryKindWithDefaults) {
  const auto cat = describe_catalogue();
  ASSERT_EQ(cat.families.size(), 8U);
  const auto& topologies = cat.families[0].kinds;
  ASSERT_EQ(topologies.size(), 4U);
  EXPECT_EQ(topologies[2].name, "fat_tree");
  bool found = false;
  for (const auto& p : topologies[0].params) {
    if (p.key == "topology.nic_rate") {
      found = true;
      EXPECT_EQ(p.default_value, "100Gbps");
      EXPECT_EQ(p.type, "rate");
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(cat.families[1].kinds[0].name, "ecmp");
  EXPECT_EQ(cat.families[3].kinds[0].name, "datagram");
  bool kmin = false;
  for (const auto& p : cat.common) kmin = kmin || p.key == "network.ecn.kmin";
  EXPECT_TRUE(kmin);
}

}  // namespace
}  // namespace fabsim

namespace fabsim {
namespace {

// A table of a kind that is not chosen is named as such, not as an unknown key.
TEST(Loader, TableOfAnotherKindIsNamed) {
  const auto fabric = error_of("[fabric]\nkind = \"ethernet\"\n[fabric.gse]\ndgsq = true\n");
  EXPECT_NE(fabric.find("key 'fabric.gse'"), std::string::npos) << fabric;
  EXPECT_NE(fabric.find("fabric.kind = \"ethernet\""), std::string::npos) << fabric;
  const auto cc =
      error_of("[transport]\nkind = \"datagram\"\n[transport.dcqcn]\nenabled = false\n");
  EXPECT_NE(cc.find("congestion control \"dcqcn\""), std::string::npos) << cc;
  // With the kinds that read them, the same tables load.
  EXPECT_EQ(error_of("[fabric]\nkind = \"gse\"\n[fabric.gse]\ndgsq = true\n"), "no error");
  EXPECT_EQ(error_of("[transport]\nkind = \"roce\"\n[transport.dcqcn]\nenabled = false\n"),
            "no error");
}

}  // namespace
}  // namespace fabsim

namespace fabsim {
namespace {

// Issue 14: NaN and infinity passed every range check (`v < lo || v > hi` is false for NaN).
TEST(Loader, NanAndInfinityAreRefused) {
  for (const char* v : {"nan", "inf", "-inf", "+nan"}) {
    const auto e = error_of(std::string("[network.buffer]\negress_alpha = ") + v + "\n");
    EXPECT_NE(e.find("network.buffer.egress_alpha"), std::string::npos) << v << ": " << e;
    EXPECT_NE(e.find("a finite number"), std::string::npos) << v << ": " << e;
  }
  EXPECT_NE(error_of("[network]\nloss_probability = nan\n").find("finite"), std::string::npos);
  EXPECT_NE(error_of("[topology]\nnic_rate = \"9300000Tbps\"\n").find("topology.nic_rate"),
            std::string::npos);
}

}  // namespace
}  // namespace fabsim

namespace fabsim {
namespace {

// Issue 14: degenerate scenarios that used to run and exit 0 are errors naming the key.
TEST(Loader, DegenerateScenariosAreErrors) {
  EXPECT_NE(error_of("[simulation]\nstop_time = 0\n").find("simulation.stop_time"),
            std::string::npos);
  EXPECT_NE(error_of("[transport]\nkind = \"roce\"\nrto_base = 0\n").find("transport.rto_base"),
            std::string::npos);
  EXPECT_NE(error_of("[network.pfc]\nlossless_classes = []\n").find("network.pfc.lossless_classes"),
            std::string::npos);
  EXPECT_EQ(error_of("[network.pfc]\nenabled = false\nlossless_classes = []\n"), "no error");
  const std::string jobs = R"(
[workload]
kind = "jobs"
[[workload.jobs]]
placement = "block"
ranks = 4
[[workload.jobs.ops]]
type = "alltoall"
bytes = "1MiB"
[sweep]
seeds = [1, 2, 1]
)";
  EXPECT_NE(error_of(jobs).find("1 appears twice"), std::string::npos) << error_of(jobs);
  // So are repeated sizes (64 KiB written twice over) and collectives ("allreduce" is
  // "allreduce_ring"): the cases would share a directory and count twice.
  const std::string sizes =
      jobs.substr(0, jobs.find("[sweep]")) + "[sweep]\nsizes = [\"64KiB\", \"65536\"]\n";
  EXPECT_NE(error_of(sizes).find("sweep.sizes"), std::string::npos) << error_of(sizes);
  EXPECT_NE(error_of(sizes).find("65536 B appears twice"), std::string::npos);
  const std::string colls = jobs.substr(0, jobs.find("[sweep]")) +
                            "[sweep]\ncollectives = [\"allreduce\", \"allreduce_ring\"]\n";
  EXPECT_NE(error_of(colls).find("sweep.collectives"), std::string::npos) << error_of(colls);
}

// A placement key of another placement is refused, not ignored: ranks = 4 under the default
// gpu_of_each_server used to run the job on every server.
TEST(Loader, APlacementKeyOfAnotherPlacementIsRefused) {
  const std::string job = R"(
[topology]
kind = "single_switch"
hosts = 8
[workload]
kind = "jobs"
[[workload.jobs]]
name = "j"
{}
[[workload.jobs.ops]]
type = "alltoall"
bytes = "1MiB"
)";
  const std::string ranks = error_of(fmt::format(fmt::runtime(job), "gpus = [0, 1]\nranks = 4"));
  EXPECT_NE(ranks.find("workload.jobs[0].ranks"), std::string::npos) << ranks;
  EXPECT_NE(ranks.find("placement = \"block\""), std::string::npos) << ranks;
  EXPECT_NE(error_of(fmt::format(fmt::runtime(job), "placement = \"block\"\ngpu = 1"))
                .find("workload.jobs[0].gpu"),
            std::string::npos);
  EXPECT_EQ(error_of(fmt::format(fmt::runtime(job), "placement = \"block\"\nranks = 4\nfirst = 2")),
            "no error");
}

// Jobs meant for disjoint GPUs: a job placed on a GPU another job has is a warning naming both.
TEST(Loader, JobsSharingAGpuAreWarnedOf) {
  const std::string two = R"(
[topology]
kind = "single_switch"
hosts = 4
[workload]
kind = "jobs"
[[workload.jobs]]
name = "a"
gpus = [0, 1]
[[workload.jobs.ops]]
type = "allreduce_ring"
bytes = "1MiB"
[[workload.jobs]]
name = "b"
gpus = [{}, 3]
[[workload.jobs.ops]]
type = "allreduce_ring"
bytes = "1MiB"
)";
  const auto shared = load_scenario_text(fmt::format(fmt::runtime(two), 1), "ov.toml");
  ASSERT_EQ(shared.warnings.size(), 1U);
  EXPECT_NE(shared.warnings[0].find("workload.jobs[1].gpus': job 'b' shares GPU 1 with job 'a'"),
            std::string::npos)
      << shared.warnings[0];
  EXPECT_TRUE(load_scenario_text(fmt::format(fmt::runtime(two), 2), "ok.toml").warnings.empty());
}

// --seed sets simulation.seed, which a scenario with sweep.seeds does not use: refused, with
// the key to set instead, rather than ignored.
TEST(Loader, ASeedOptionBesideSweepSeedsIsRefused) {
  const std::string path = ::testing::TempDir() + "seeds.toml";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("[sweep]\nseeds = [1, 2]\n", f);
    std::fclose(f);
  }
  const uint64_t seed = 7;
  try {
    load_scenario(path, {}, &seed);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--seed 7 would be ignored"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("sweep.seeds"), std::string::npos);
  }
  EXPECT_EQ(load_scenario(path, {}).sweep.seeds.size(), 2U);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace fabsim

namespace fabsim {
namespace {

// Issue 14: a huge delay or stop time overflowed simulated time (negative end and FCTs).
TEST(Loader, DurationsBeyondTheHorizonAreRefused) {
  const auto stop = error_of("[simulation]\nstop_time = \"3000000s\"\n");
  EXPECT_NE(stop.find("simulation.stop_time"), std::string::npos) << stop;
  EXPECT_NE(stop.find("horizon"), std::string::npos) << stop;
  const auto delay = error_of("[topology]\nfabric_link_delay = \"2500000s\"\n");
  EXPECT_NE(delay.find("topology.fabric_link_delay"), std::string::npos) << delay;
  EXPECT_EQ(error_of("[simulation]\nstop_time = \"2000000s\"\n"), "no error");  // 23 days
}

}  // namespace
}  // namespace fabsim

namespace fabsim {
namespace {

// Issue 14, the rest of the degenerate scenarios (docs/SCENARIOS.md "Degenerate scenarios"):
// one host, flows that never start (errors), a GSE container shorter than a frame (a warning).
TEST(Loader, OneHostTopologyIsAnError) {
  const auto e = error_of("[topology]\nservers = 1\ngpus_per_server = 1\n");
  EXPECT_NE(e.find("key 'topology.kind'"), std::string::npos) << e;
  EXPECT_NE(e.find("at least 2 hosts"), std::string::npos) << e;
  EXPECT_EQ(error_of("[topology]\nservers = 1\ngpus_per_server = 2\n"), "no error");
  // An explicit flow list with no flow: nothing to simulate either.
  const auto none = error_of("[workload]\nkind = \"flows\"\n");
  EXPECT_NE(none.find("key 'workload.flows'"), std::string::npos) << none;
}

TEST(Loader, FlowsAfterTheStopTime) {
  // Every flow starts at or after the stop time: nothing would run, an error.
  const auto all = error_of("[simulation]\nstop_time = \"1ms\"\n[workload]\nstart = \"1ms\"\n");
  EXPECT_NE(all.find("key 'workload.start'"), std::string::npos) << all;
  EXPECT_NE(all.find("simulation.stop_time = 1ms"), std::string::npos) << all;
  const std::string jobs = R"(
[simulation]
stop_time = "1ms"
[workload]
kind = "jobs"
[[workload.jobs]]
gpus = [0, 1]
start = "5ms"
[[workload.jobs.ops]]
type = "alltoall"
bytes = "1MiB"
)";
  EXPECT_NE(error_of(jobs).find("key 'workload.jobs[0].start'"), std::string::npos);
  // Some do: a warning naming the first late one, and the run goes on.
  const std::string some = R"(
[simulation]
stop_time = "1ms"
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 1
[[workload.flows]]
src = 1
dst = 2
start = "2ms"
[[workload.flows]]
src = 2
dst = 3
start = "3ms"
)";
  const auto c = load_scenario_text(some, "late.toml");
  ASSERT_EQ(c.warnings.size(), 1U);
  EXPECT_NE(c.warnings[0].find("late.toml: key 'workload.flows[1].start'"), std::string::npos)
      << c.warnings[0];
  EXPECT_NE(c.warnings[0].find("2 of 3"), std::string::npos) << c.warnings[0];
  EXPECT_TRUE(load_scenario_text("", "fine.toml").warnings.empty());
}

TEST(Loader, GseContainerShorterThanAFrameIsAWarning) {
  // 4096 payload + 62 headers + 16 GSE header + 20 preamble and gap = 4194 wire bytes.
  const std::string gse = "[fabric]\nkind = \"gse\"\n[fabric.gse]\ncontainer = ";
  const auto c = load_scenario_text(gse + "4193\n", "g.toml");
  ASSERT_EQ(c.warnings.size(), 1U);
  EXPECT_NE(c.warnings[0].find("g.toml: key 'fabric.gse.container'"), std::string::npos)
      << c.warnings[0];
  EXPECT_NE(c.warnings[0].find("4194 wire bytes"), std::string::npos) << c.warnings[0];
  EXPECT_TRUE(load_scenario_text(gse + "4194\n", "g.toml").warnings.empty());
  // A smaller MTU makes the same container hold whole frames.
  EXPECT_TRUE(load_scenario_text(gse + "\"2KiB\"\n", "g.toml", {"transport.payload=1KiB"})
                  .warnings.empty());
}

}  // namespace
}  // namespace fabsim
