#!/usr/bin/python3
"""Runs uet-htsim's own validation batteries (htsim/sim/datacenter/validate_uec_sender.txt for
NSCC, validate_uec_rcv.txt for receiver credit alone, validate_uec_both.txt for both: single
flows, incasts, permutations with 128 or one entropy, a quarter-speed link, oversubscribed
leaf-spines) on fabsim's UET and on htsim_uec, side by side, and prints the tables of
docs/VALIDATION.md "uet-htsim's own validation battery" (issues 17 and 18).

Usage:
  tools/uet_htsim_battery.py --fabsim build/release/apps/fabsim/fabsim \\
      --htsim /path/to/uet-htsim/htsim/sim/datacenter --out DIR [--battery FILE] [--only 1,3,8]
      [--no-htsim]

Each experiment of the battery is a connection matrix and htsim flags. They map onto fabsim as:
  - no -topo: htsim's default three-tier fat tree for the matrix's N hosts, fabsim's fat_tree
    with k^3/4 = N; -topo FILE (two tiers): fabsim's leaf_spine with the file's hosts per leaf,
    uplinks (one spine each) and link speeds;
  - the wire, buffers, trimming, ECN, NSCC and entropy selection as tools/uet_side_by_side.py
    (thresholds from one BDP of the tier count, checked against the values htsim's log prints);
  - -receiver_cc_only: transport.uet.receiver_credit with cc = "none"; -receiver_cc (with
    -sender_cc): receiver credit with NSCC; both turn ECN off on ToR ports towards hosts;
  - -paths P: transport.uet.paths = P; -cwnd C: transport.nscc.initial_cwnd = C x 4,150 B
    (with NSCC on; htsim's credit-only sender never reads it);
    -end T: simulation.stop_time = T us;
  - -failed N: htsim runs the first N core -> aggregation links at a quarter of their speed,
    with a quarter of the queue and ECN thresholds; fabsim gets a `degrade` fault at time 0 on
    the same links (one direction), whose ports scale thresholds to the lower rate.
htsim runs with its own default seed, as its validate.py does; fabsim with seed 1. The table
gives each side's finished flows, FCT median and maximum, and htsim's recorded tail target
(the battery's tailFCT, an upper bound its authors check, not a measurement).

--seeds N (N > 1) also runs seeds 2..N on both sides (fabsim simulation.seed, htsim -seed; for
htsim 1 stands in for 13, its default) and prints a second table: each side's FCT median and
maximum as the range over its runs in which every flow finished. With
one entropy per flow (-paths 1) the seed picks the ECMP collisions, so a single run's maximum
is one draw of the worst collision; compare ranges there, not single figures.
"""
import argparse
import json
import pathlib
import re
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import uet_side_by_side as sbs  # noqa: E402  (the shared scenario writer and parsers)

HTSIM_SEED = 13  # htsim's default seed (main_uec.cpp)
MTU = 4150  # htsim's default packet size: 4,086 B payload + 64 B header
# (trim threshold, ECN kmin, kmax) by tier count: one BDP, 20 % and 80 % of it in whole packets
# (htsim's calculate_bdp_pkt over its unloaded round trip; REFERENCE.md §9.3.3).
THRESHOLDS = {2: (120350, 24900, 99600), 3: (178450, 37350, 145250)}


def read_battery(path):
    """[(matrix, name, [flag, ...], tail target or 0)] in file order."""
    out, lines, i = [], path.read_text().splitlines(), 0
    while i < len(lines):
        head = lines[i].strip()
        i += 1
        if not head or head.startswith("#") or head.startswith("!"):
            continue
        name, params, tail = head, [], 0
        while i < len(lines) and lines[i].startswith("!"):
            key, _, value = lines[i][1:].strip().partition(" ")
            i += 1
            if key == "Param":
                params += value.split()
            elif key == "tailFCT":
                tail = int(value)
            elif key == "Experiment":
                name = value.strip()
        out.append((head, name, params, tail))
    return out


def flags(params):
    """htsim flags as {flag: value or True}."""
    d, i = {}, 0
    while i < len(params):
        if i + 1 < len(params) and not params[i + 1].startswith("-"):
            d[params[i]] = params[i + 1]
            i += 2
        else:
            d[params[i]] = True
            i += 1
    return d


def topo_file(path):
    """The per-tier keys of an htsim .topo file: {"Nodes": n, "Tiers": t, 0: {...}, 1: {...}}."""
    out, tier = {}, None
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) != 2:
            continue
        if parts[0] == "Tier":
            tier = int(parts[1])
            out[tier] = {}
        elif tier is None:
            out[parts[0]] = int(parts[1])
        else:
            out[tier][parts[0]] = parts[1]
    return out


def topology(nodes, f, hdir):
    """(fabsim topology block, tiers, fault blocks for -failed)."""
    failed = int(f.get("-failed", 0))
    if "-topo" in f:
        t = topo_file(hdir / f["-topo"])
        if t.get("Tiers") != 2 or t.get("Nodes") != nodes:
            sys.exit(f"{f['-topo']}: only two-tier files for {nodes} hosts are mapped")
        if failed:
            sys.exit("-failed with -topo is not mapped")
        down, up = int(t[0]["Radix_Down"]), int(t[0]["Radix_Up"])
        block = (f'[topology]\nkind = "leaf_spine"\nservers = {nodes}\ngpus_per_server = 1\n'
                 f'servers_per_leaf = {down}\nspines = {up}\n'
                 f'nic_rate = "{t[0]["Downlink_speed_Gbps"]}Gbps"\n'
                 f'uplink_rate = "{t[1]["Downlink_speed_Gbps"]}Gbps"\n'
                 f'host_link_delay = "{t[0]["Downlink_Latency_ns"]}ns"\n'
                 f'fabric_link_delay = "{t[1]["Downlink_Latency_ns"]}ns"\n')
        return block, 2, []
    k = round((4 * nodes) ** (1 / 3))
    if k ** 3 // 4 != nodes:
        sys.exit(f"{nodes} hosts is not a k-ary fat tree (k^3/4)")
    faults = []
    # htsim (fat_tree_topology.cpp): the link from core switch podpos + (k/2) l to aggregation
    # switch a (podpos = a's place in its pod) runs at a quarter speed when l + a (k/2) < N,
    # so the first N (N <= k/2) are aggregation switch 0 of pod 0 and its cores 0, k/2, k, ...
    # fabsim wires agg j of a pod to cores j (k/2) .. j (k/2) + k/2 - 1: for N = 1, core 0.
    if failed > 1:
        sys.exit(f"-failed {failed}: only one failed link is mapped")
    for _ in range(failed):
        faults += ["[[faults.events]]", 'at = "0s"', 'action = "degrade"',
                   'link = "agg0_0-core0"', 'direction = "down"', "rate_factor = 0.25"]
    return sbs.FAT_TREE.format(k=k), 3, faults


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabsim", required=True)
    ap.add_argument("--htsim", required=True, help="uet-htsim's htsim/sim/datacenter directory")
    ap.add_argument("--battery", default="validate_uec_sender.txt",
                    help="the battery file, relative to --htsim: validate_uec_sender.txt "
                         "(NSCC), validate_uec_rcv.txt (receiver credit alone) or "
                         "validate_uec_both.txt (both)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", help="experiment numbers (1-based, comma separated)")
    ap.add_argument("--no-htsim", action="store_true")
    ap.add_argument("--seeds", type=int, default=1,
                    help="runs per side and row: the first as above, then seeds 2..N")
    args = ap.parse_args()
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    hdir = pathlib.Path(args.htsim).resolve()
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    battery = read_battery(hdir / args.battery)
    pick = {int(x) for x in args.only.split(",")} if args.only else set(range(1, len(battery) + 1))
    rows = []
    for n, (matrix, title, params, tail) in enumerate(battery, start=1):
        if n not in pick:
            continue
        f = flags(params)
        mpath = hdir / matrix
        nodes = int(re.search(r"Nodes\s+(\d+)", mpath.read_text()).group(1))
        block, tiers, faults = topology(nodes, f, hdir)
        trim, kmin, kmax = THRESHOLDS[tiers]
        uet = [f"paths = {f['-paths']}"] if "-paths" in f else []
        # -cwnd sets NSCC's first window; with credit alone htsim sends on credit only and the
        # window it sets is never read (UecSrc::can_send_RCCC).
        nscc = ([f'initial_cwnd = "{int(f["-cwnd"]) * MTU}B"']
                if "-cwnd" in f and "-receiver_cc_only" not in f else [])
        stop = f"{f.get('-end', 1000)}us"
        name = f"b{n:02d}"
        toml = out / f"{name}.toml"
        # A degraded port trims and marks at thresholds scaled to its rate, as htsim's.
        scale = ['reference_rate = "100Gbps"'] if faults else []
        # -receiver_cc_only: credit alone; -receiver_cc (with -sender_cc): credit and NSCC.
        credit = "none" if "-receiver_cc_only" in f else "nscc" if "-receiver_cc" in f else None
        toml.write_text(sbs.fabsim_toml(name, mpath, block, trim, kmin, kmax, stop=stop, uet=uet,
                                        nscc=nscc, faults=faults, ecn=scale, trims=scale,
                                        credit_cc=credit))
        fw, frss, fu, _, _ = sbs.timed([args.fabsim, "run", str(toml), "--out", str(out / name)],
                                    ok=(0, 3))  # 3: the run ended with flows unfinished
        ff, _ = sbs.fabsim_fcts(out / name)
        fseeds = [ff]
        for seed in range(2, args.seeds + 1):
            sbs.timed([args.fabsim, "run", str(toml), "--set", f"simulation.seed={seed}",
                       "--out", str(out / f"{name}-seed{seed}")], ok=(0, 3))
            fseeds.append(sbs.fabsim_fcts(out / f"{name}-seed{seed}")[0])
        row = {"n": n, "title": title, "flags": " ".join(params), "tail": tail,
               "flows": len(re.findall(r"->", mpath.read_text())), "f": ff, "fw": fw}
        if not args.no_htsim:
            # htsim writes its logs to its working directory: run it in --out, with -topo's
            # file (relative to its own directory) made absolute.
            hparams = [str(hdir / p) if i > 0 and params[i - 1] == "-topo" else p
                       for i, p in enumerate(params)]
            hw, _, _, log, _ = sbs.timed([str(hdir / "htsim_uec"), "-tm", str(mpath), *hparams],
                                      cwd=str(out))
            (out / f"{name}.htsim.log").write_text(log)
            m = re.search(r"Setting ECN to parameters low (\d+) high (\d+)", log)
            if m and (int(m.group(1)), int(m.group(2))) != (kmin, kmax):
                sys.exit(f"{name}: htsim's ECN thresholds {m.groups()} are not {kmin}, {kmax}")
            row["h"], _ = sbs.htsim_fcts(log)
            row["hw"] = hw
            row["hseeds"] = [row["h"]]
            for seed in range(2, args.seeds + 1):
                seed = 1 if seed == HTSIM_SEED else seed  # its first run had the default
                _, _, _, slog, _ = sbs.timed([str(hdir / "htsim_uec"), "-tm", str(mpath), *hparams,
                                           "-seed", str(seed)], cwd=str(out))
                (out / f"{name}-seed{seed}.htsim.log").write_text(slog)
                row["hseeds"].append(sbs.htsim_fcts(slog)[0])
            # Both sides must agree on the receiver's fabric feedback (htsim: OversubscribedCC).
            counters = json.load((out / name / "summary.json").open())["transport"]
            theirs = "Using simple receiver oversubscribed CC" in log
            if theirs != ("feedback_periods" in counters):
                row["title"] += (" [fabric feedback: htsim " + ("on" if theirs else "off") +
                                 ", fabsim " + ("off" if theirs else "on") + "]")
        row["fseeds"] = fseeds
        rows.append(row)
        print(name, title, len(ff), max(ff, default=0), flush=True)

    print("\n| # | experiment (htsim flags) | flows | finished fabsim / htsim | FCT p50 fabsim / htsim"
          " (us) | max FCT fabsim / htsim (us) | htsim's tail target | wall fabsim / htsim |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        f, h = r["f"], r.get("h")

        def cell(fn):
            if not f:
                return "-"
            a = fn(f)
            if not h:
                return f"{a:,.1f}"
            b = fn(h)
            return f"{a:,.1f} / {b:,.1f} ({(a / b - 1) * 100:+.1f} %)"
        fin = f"{len(f)} / {len(h)}" if h is not None else f"{len(f)}"
        wall = f"{r['fw']:.2f} / {r['hw']:.2f} s" if h is not None else f"{r['fw']:.2f} s"
        print(f"| {r['n']} | {r['title']} (`{r['flags']}`) | {r['flows']} | {fin} | "
              f"{cell(statistics.median)} | {cell(max)} | {r['tail']:,} | {wall} |")

    if args.seeds > 1:
        print_seed_ranges(rows, args.seeds)


def print_seed_ranges(rows, seeds):
    """FCT median and maximum of each side as the range over its runs in which every flow
    finished (seeds 1..N; htsim's first run with its default seed). Ranges overlap if they do
    at the 0.1 us the table shows."""
    print("\n| # | runs used fabsim / htsim | FCT p50 fabsim (us) | htsim | max FCT fabsim (us) |"
          " htsim | max ranges overlap |")
    print("|---:|---:|---:|---:|---:|---:|---|")

    def span(runs, flows, fn):
        vals = [round(fn(r), 1) for r in runs if len(r) == flows]
        return (min(vals), max(vals)) if vals else None

    def text(r):
        return "-" if r is None else f"{r[0]:,.1f} - {r[1]:,.1f}"
    for r in rows:
        f, h, n = r["fseeds"], r.get("hseeds", []), r["flows"]
        fmax, hmax = span(f, n, max), span(h, n, max)
        overlap = ("-" if fmax is None or hmax is None else
                   "yes" if fmax[0] <= hmax[1] and hmax[0] <= fmax[1] else "no")
        used = (f"{sum(len(x) == n for x in f)} of {len(f)} / "
                f"{sum(len(x) == n for x in h)} of {len(h)}" if h else
                f"{sum(len(x) == n for x in f)} of {len(f)}")
        print(f"| {r['n']} | {used} | {text(span(f, n, statistics.median))} | "
              f"{text(span(h, n, statistics.median))} | {text(fmax)} | {text(hmax)} | {overlap} |")


if __name__ == "__main__":
    main()
