#!/usr/bin/python3
"""fabsim beside the HPCC ns-3 simulator on the same flows (issue 16; docs/VALIDATION.md
"Beside HPCC's ns-3"; REFERENCE.md §9.2).

1. fabsim runs scenarios/hpcc-fat-websearch.toml (the topology of HPCC's mix/fat.txt, web search
   at 30 % load) with the chosen CC, and writes its flows (flows.csv).
2. Those flows become an ns-3 flow file (`src dst 3 100 size start_s`, starts offset by 2 s as
   HPCC's generator does), and a config file is written with run.py's values at --bw 100 for
   `--cc hp`, `--cc dcqcn` or `--cc timely` (the keys and values of REFERENCE.md §9.2.3).
3. ns-3's scratch/third runs them on mix/fat.txt.
4. Flows are matched one to one (source, destination, size, start). Both FCTs are divided by
   ns-3's standalone FCT of the flow (the same denominator), clamped at 1 as HPCC's
   fct_analysis.py does, and bucketed by size into equal-count buckets; p50 and p99 per bucket.

The peer is built outside this repository (REFERENCE.md §9.2.1; docs/VALIDATION.md says how).

  tools/hpcc_side_by_side.py --fabsim build/release/apps/fabsim/fabsim \\
      --hpcc /work/peers/hpcc/simulation --cc hpcc|dcqcn|timely --duration 2ms --out out/hpcc-side
  tools/hpcc_side_by_side.py ... --cdf fbhdp --load 0.5   (another of workload/cdf's
      distributions or a CDF file, and another load: ns-3 replays whatever fabsim drew)
  tools/hpcc_side_by_side.py --plot out/hpcc-side     (slowdown-vs-ns3.png from both CCs' runs)
  tools/hpcc_side_by_side.py --pool CC DIR [DIR ...]   (one table over several runs' flows, e.g.
      the same CC with --seed 1..4: a bucket's p99 over 141 flows is its second slowest flow)
"""
import argparse
import csv
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "hpcc-fat-websearch.toml"

# run.py's values at --bw 100 (REFERENCE.md §9.2.3), per CC.
COMMON = {
    "ENABLE_QCN": "1", "USE_DYNAMIC_PFC_THRESHOLD": "1", "PACKET_PAYLOAD_SIZE": "1000",
    "ALPHA_RESUME_INTERVAL": "1", "RATE_DECREASE_INTERVAL": "4", "CLAMP_TARGET_RATE": "0",
    "RP_TIMER": "300", "EWMA_GAIN": "0.00390625", "FAST_RECOVERY_TIMES": "1",
    "MIN_RATE": "1000Mb/s", "DCTCP_RATE_AI": "1000Mb/s", "ERROR_RATE_PER_LINK": "0.0000",
    "L2_CHUNK_SIZE": "4000", "L2_ACK_INTERVAL": "1", "L2_BACK_TO_ZERO": "0", "GLOBAL_T": "1",
    "U_TARGET": "0.95", "MI_THRESH": "0", "MULTI_RATE": "0", "SAMPLE_FEEDBACK": "0",
    "PINT_LOG_BASE": "1.05", "PINT_PROB": "1.0", "RATE_BOUND": "1", "LINK_DOWN": "0 0 0",
    "ENABLE_TRACE": "0",
    "KMAX_MAP": "2 100000000000 1600 400000000000 6400",
    "KMIN_MAP": "2 100000000000 400 400000000000 1600",
    "PMAX_MAP": "2 100000000000 0.2 400000000000 0.2",
    "BUFFER_SIZE": "32",
}
PER_CC = {
    "hpcc": {"CC_MODE": "3", "RATE_AI": "40Mb/s", "RATE_HAI": "40Mb/s", "HAS_WIN": "1",
             "VAR_WIN": "1", "FAST_REACT": "1", "INT_MULTI": "4", "ACK_HIGH_PRIO": "0"},
    "dcqcn": {"CC_MODE": "1", "RATE_AI": "20Mb/s", "RATE_HAI": "200Mb/s", "HAS_WIN": "0",
              "VAR_WIN": "0", "FAST_REACT": "0", "INT_MULTI": "1", "ACK_HIGH_PRIO": "1"},
    # run.py --cc timely: ai = 10 x bw / 10, hai = 50 x bw / 10 Mb/s
    "timely": {"CC_MODE": "7", "RATE_AI": "100Mb/s", "RATE_HAI": "500Mb/s", "HAS_WIN": "0",
               "VAR_WIN": "0", "FAST_REACT": "0", "INT_MULTI": "1", "ACK_HIGH_PRIO": "1"},
}
# fabsim keys per CC. ns-3's TIMELY carries its send timestamp in every data packet and ACK
# (IntHeader mode TS, 8 B); fabsim's TIMELY reads NIC timestamps and sends none, so the
# comparison adds those bytes to fabsim's frames (the scenario's 48 B header, 64 B ACK).
FABSIM_SETS = {
    "hpcc": [],
    "dcqcn": ["transport.dcqcn.preset=connectx"],
    "timely": ["transport.header_bytes=56", "transport.control_bytes=72"],
}
BASE_NS = 2_000_000_000  # HPCC's generator starts flows at 2 s


def timed(cmd, cwd=None, env=None):
    """Runs `cmd` under /usr/bin/time; returns (wall s, peak RSS MiB, stdout+stderr)."""
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M"] + cmd, cwd=cwd, env=env,
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    m = re.search(r"TIME ([0-9.]+) ([0-9]+)", p.stderr)
    rss = int(m.group(2)) / 1024 if m else float("nan")
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return wall, rss, p.stdout + p.stderr


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def match(out, cc):
    """Reads a run's two sides from `out` (fabsim-CC/flows.csv, ns3-CC/fct.txt); returns
    (fabsim's flows, flows finished in ns-3, [(bytes, fabsim slowdown, ns-3 slowdown)] sorted)."""
    flows = list(csv.DictReader((out / f"fabsim-{cc}" / "flows.csv").open()))
    ns_rows = {}
    for line in (out / f"ns3-{cc}" / "fct.txt").read_text().split("\n"):
        w = line.split()
        if len(w) < 8:
            continue
        src, dst = (int(w[0], 16) >> 8) & 0xFFFF, (int(w[1], 16) >> 8) & 0xFFFF
        # (start, fct, standalone fct), ns; the start went through a decimal string and back
        ns_rows.setdefault((src, dst, int(w[4])), []).append(
            (int(w[5]) - BASE_NS, int(w[6]), int(w[7])))
    matched = []
    for r in flows:
        cands = ns_rows.get((int(r["src"]), int(r["dst"]), int(r["bytes"])), [])
        start = int(r["start_ps"]) // 1000
        best = min(cands, key=lambda c: abs(c[0] - start), default=None)
        if best is not None and abs(best[0] - start) <= 2 and r["end_ps"] and int(r["end_ps"]) > 0:
            _, fct_ns, alone = best
            matched.append((int(r["bytes"]), int(r["fct_ps"]) / 1000 / alone, fct_ns / alone))
    matched.sort()
    return flows, sum(len(v) for v in ns_rows.values()), matched


def table(matched, buckets, csv_path=None):
    """Prints p50 and p99 of both slowdowns per equal-count size bucket (and writes them)."""
    print("| size <= (B) | flows | fabsim p50 | ns-3 p50 | fabsim p99 | ns-3 p99 |")
    print("|---:|---:|---:|---:|---:|---:|")
    rows = []
    n = len(matched)
    for b in range(buckets):
        part = matched[b * n // buckets:(b + 1) * n // buckets]
        if not part:
            continue
        fs = [max(1.0, x[1]) for x in part]
        ss = [max(1.0, x[2]) for x in part]
        row = (part[-1][0], len(part), percentile(fs, 0.5), percentile(ss, 0.5),
               percentile(fs, 0.99), percentile(ss, 0.99))
        rows.append(row)
        print("| {:,} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |".format(*row))
    if csv_path is not None:
        with csv_path.open("w") as f:
            f.write("size_max,flows,fabsim_p50,ns3_p50,fabsim_p99,ns3_p99\n")
            for row in rows:
                f.write(",".join(str(x) for x in row) + "\n")


def pool(cc, dirs, buckets):
    """One table over the matched flows of several runs (e.g. one per --seed): a bucket's p99
    over 141 flows is its second slowest flow, so one seed cannot tell chance from a bias."""
    matched = []
    for d in dirs:
        _, _, m = match(pathlib.Path(d).resolve(), cc)
        print(f"{d}: {len(m)} flows matched")
        matched += m
    matched.sort()
    print(f"{cc}: {len(matched)} flows pooled from {len(dirs)} runs")
    table(matched, buckets)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabsim", required=True)
    ap.add_argument("--hpcc", required=True, help="the peer's simulation/ directory (built)")
    ap.add_argument("--cc", choices=sorted(PER_CC), default="hpcc")
    ap.add_argument("--duration", default="2ms", help="arrival window of the flows")
    ap.add_argument("--cdf", default="websearch",
                    help="flow-size CDF: a shipped name (websearch, fbhdp, ...) or a file; "
                         "default the scenario's web search")
    ap.add_argument("--load", type=float, default=0.3,
                    help="offered load of the host links, 0 < load <= 1 (default 0.3)")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--buckets", type=int, default=10)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if not 0 < args.load <= 1:
        sys.exit(f"--load {args.load}: expected a fraction of the host links' rate, 0 < load <= 1")
    # fabsim reads a relative CDF path from the scenario's folder: a file named here is passed
    # whole; anything else is one of the shipped names (fabsim says so if it is not).
    cdf = str(pathlib.Path(args.cdf).resolve()) if pathlib.Path(args.cdf).is_file() else args.cdf
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    hpcc = pathlib.Path(args.hpcc).resolve()
    (out / f"workload-{args.cc}.txt").write_text(f"{args.cdf} at {args.load * 100:g} %\n")

    # 1. fabsim
    sets = ["--set", f"workload.duration={args.duration}", "--set", f"transport.cc={args.cc}",
            "--set", f"workload.cdf={cdf}", "--set", f"workload.load={args.load}"]
    for kv in FABSIM_SETS[args.cc]:
        sets += ["--set", kv]
    fab_dir = out / f"fabsim-{args.cc}"
    f_wall, f_rss, _ = timed([args.fabsim, "run", str(SCENARIO), "--seed", args.seed,
                              "--out", str(fab_dir)] + sets)
    flows = list(csv.DictReader((fab_dir / "flows.csv").open()))

    # 2. the same flows for ns-3
    ns = out / f"ns3-{args.cc}"
    ns.mkdir(exist_ok=True)
    with (ns / "flow.txt").open("w") as f:
        f.write(f"{len(flows)}\n")
        for r in flows:
            start = (BASE_NS + int(r["start_ps"]) // 1000) / 1e9
            f.write(f"{r['src']} {r['dst']} 3 100 {r['bytes']} {start:.9f}\n")
    (ns / "trace.txt").write_text("0\n\n")
    cfg = dict(COMMON, **PER_CC[args.cc])
    cfg.update({"TOPOLOGY_FILE": str(hpcc / "mix" / "fat.txt"), "FLOW_FILE": str(ns / "flow.txt"),
                "TRACE_FILE": str(ns / "trace.txt"), "TRACE_OUTPUT_FILE": str(ns / "mix.tr"),
                "FCT_OUTPUT_FILE": str(ns / "fct.txt"), "PFC_OUTPUT_FILE": str(ns / "pfc.txt"),
                "QLEN_MON_FILE": str(ns / "qlen.txt"), "QLEN_MON_START": "2000000000",
                "QLEN_MON_END": "2000000000", "SIMULATOR_STOP_TIME": "4.00"})
    (ns / "config.txt").write_text("".join(f"{k} {v}\n" for k, v in cfg.items()))

    # 3. ns-3
    env = {"LD_LIBRARY_PATH": str(hpcc / "build"), "PATH": "/usr/bin:/bin"}
    n_wall, n_rss, _ = timed([str(hpcc / "build" / "scratch" / "third"), str(ns / "config.txt")],
                             cwd=str(hpcc), env=env)

    # 4. match and compare
    flows, ns_count, matched = match(out, args.cc)
    print(f"{args.cc}: {len(flows)} flows, {ns_count} finished in ns-3, {len(matched)} matched")
    table(matched, args.buckets, out / f"buckets-{args.cc}.csv")
    data_pk = sum((int(r["bytes"]) + 999) // 1000 for r in flows)
    print(f"ns-3 finished {ns_count} of {len(flows)} flows")
    print(f"wall: fabsim {f_wall:.1f} s, ns-3 {n_wall:.1f} s (x{n_wall / f_wall:.1f}); "
          f"peak RSS: fabsim {f_rss:.0f} MiB, ns-3 {n_rss:.0f} MiB; data packets {data_pk}; "
          f"packets per wall-second: fabsim {data_pk / f_wall:.0f}, ns-3 {data_pk / n_wall:.0f}")
    return 0


def plot(out):
    """slowdown-vs-ns3.png: p50 and p99 per size bucket, fabsim and ns-3, one panel per CC."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    files = sorted(out.glob("buckets-*.csv"))
    fig, axes = plt.subplots(1, len(files), figsize=(6 * len(files), 4), squeeze=False)
    for ax, f in zip(axes[0], files):
        rows = list(csv.DictReader(f.open()))
        x = [int(r["size_max"]) for r in rows]
        for col, style, label in (("fabsim_p50", "o-", "fabsim p50"), ("ns3_p50", "s--", "ns-3 p50"),
                                  ("fabsim_p99", "o-", "fabsim p99"), ("ns3_p99", "s--", "ns-3 p99")):
            ax.plot(x, [float(r[col]) for r in rows], style, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("flow size, largest of the bucket (B)")
        ax.set_ylabel("FCT slowdown")
        cc = f.stem.replace("buckets-", "")
        named = out / f"workload-{cc}.txt"
        workload = named.read_text().strip() if named.is_file() else "websearch at 30 %"
        ax.set_title(f"{cc}: {workload}, HPCC fat.txt")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out / "slowdown-vs-ns3.png", dpi=100)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--plot":
        plot(pathlib.Path(sys.argv[2]))
        sys.exit(0)
    if len(sys.argv) >= 2 and sys.argv[1] == "--pool":
        if len(sys.argv) < 4 or sys.argv[2] not in PER_CC:
            sys.exit(f"usage: {sys.argv[0]} --pool CC DIR [DIR ...], CC one of "
                     f"{', '.join(sorted(PER_CC))}, each DIR a run's --out with that CC")
        for d in sys.argv[3:]:
            if not (pathlib.Path(d) / f"fabsim-{sys.argv[2]}" / "flows.csv").is_file():
                sys.exit(f"{d}: no fabsim-{sys.argv[2]}/flows.csv (not a --cc {sys.argv[2]} run)")
        pool(sys.argv[2], sys.argv[3:], 10)
        sys.exit(0)
    sys.exit(main())
