// fabsim_embed: drives fabsim through the embedding API (api/fabsim_api.h) from a per-rank
// trace (examples/embed/trace.h), as a system simulator would through its network backend,
// and prints what `fabsim run` prints of the result (docs/EMBEDDING.md "The example").
//
//   fabsim_embed SCENARIO.toml TRACE [--set key=value]... [--out DIR] [--messages]
//
// Exit 0 when every message was delivered and every rank finished with a balanced ledger, 3
// when the run ended with something undone (stop time), 1 when the ledger does not balance, 2
// on a bad scenario, trace or command line.
#include <cstdio>     // output
#include <exception>  // errors
#include <string>     // arguments
#include <vector>     // overrides

#include "api/fabsim_api.h"
#include "examples/embed/trace.h"
#include "report/writers.h"

namespace {

int usage() {
  std::fprintf(stderr, "usage: fabsim_embed SCENARIO.toml TRACE [--set key=value]... "
                       "[--out DIR] [--messages]\n");
  return 2;
}

void print_messages(const fabsim::Backend& net) {
  std::printf("%-8s %-10s %5s %5s %12s %8s %14s %14s\n", "message", "job", "src", "dst", "bytes",
              "tag", "start (us)", "end (us)");
  for (fabsim::MessageId m = 0; m < net.messages(); ++m) {
    const fabsim::MessageRecord& r = net.message(m);
    const bool started = r.flow != fabsim::MessageRecord::kNoFlow;
    std::printf("%-8u %-10s %5u %5u %12lld %8d %14.3f %14.3f\n", m,
                net.job_result(r.job).name.c_str(), r.src_rank, r.dst_rank,
                static_cast<long long>(r.bytes), r.tag,
                started ? net.flow(m).spec.start.us_f() : -1.0,
                r.delivered ? net.flow(m).end.us_f() : -1.0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> overrides;
  std::vector<std::string> files;
  std::string out;
  bool messages = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--set" && i + 1 < args.size()) {
      overrides.push_back(args[++i]);
    } else if (args[i] == "--out" && i + 1 < args.size()) {
      out = args[++i];
    } else if (args[i] == "--messages") {
      messages = true;
    } else if (!args[i].empty() && args[i][0] == '-') {
      return usage();
    } else {
      files.push_back(args[i]);
    }
  }
  if (files.size() != 2) return usage();
  try {
    const fabsim::ScenarioConfig cfg = fabsim::load_embedded_scenario(files[0], overrides);
    const fabsim::Trace trace = fabsim::load_trace(files[1]);
    fabsim::Backend net(cfg);
    fabsim::TraceDriver driver(net, trace);
    std::printf("fabsim_embed: %s on %s, transport %s; trace %s: %zu job(s), %zu ops\n",
                cfg.name.c_str(), net.topology().describe().c_str(),
                std::string(cfg.transport.name()).c_str(), files[1].c_str(), trace.jobs.size(),
                driver.ops());
    net.run();
    if (messages) print_messages(net);
    std::printf("ops done %zu of %zu; recvs unmatched %zu; messages unclaimed %zu\n",
                driver.ops_done(), driver.ops(), net.unmatched_recvs(), net.unclaimed_messages());
    const fabsim::RunResult r = net.finish();
    std::fputs(fabsim::summary_table(r).c_str(), stdout);
    if (!out.empty()) fabsim::write_results(r, out, true);
    if (!r.conserved()) {
      std::printf("ledger does not balance: %s\n", fabsim::conservation_violation(r).c_str());
      return 1;
    }
    const fabsim::ClassLedger total = r.ledger.total();
    std::printf("ledger balanced: %llu packets injected, %llu delivered, %llu dropped, %llu in "
                "flight at the end\n",
                static_cast<unsigned long long>(total.injected.packets),
                static_cast<unsigned long long>(total.delivered.packets),
                static_cast<unsigned long long>(total.dropped_total().packets),
                static_cast<unsigned long long>(total.in_flight.packets));
    return r.complete() && driver.ops_done() == driver.ops() ? 0 : 3;
  } catch (const std::exception& e) {  // ConfigError, TraceError, ApiError, file errors
    std::fprintf(stderr, "fabsim_embed: %s\n", e.what());
  }
  return 2;
}
