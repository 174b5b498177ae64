#!/usr/bin/python3
"""HPCC's two-flow shares, fabsim beside the HPCC ns-3 simulator, over many join offsets
(issue 16; docs/VALIDATION.md "HPCC's two-flow shares beside ns-3").

Three hosts on one switch, 100G links of 1 us, no PFC. Host 1 sends to host 0 from t = 0;
host 2 sends to host 0 from t = offset. Both flows are long enough to be running over the
measurement window [offset + 900 us, offset + 2400 us]. Each flow's share is its goodput in
that window: payload bytes received (fabsim's trace) or cumulatively acknowledged (ns-3's
per-ACK log), divided by the window. The ratio is the smaller share over the larger.

fabsim runs the scenario this script writes; ns-3 (optional) runs scratch/third with run.py's
HPCC values at --bw 100 (tools/hpcc_side_by_side.py's table), the same payload and R_AI, on the
same 3-host topology. The ns-3 shares are read from the lines that rdma-hw.cc prints for every
ACK when it is compiled with PRINT_LOG set to 1 ("<ns> update|fast <sip> <dip> <sport> <dport>
[lastUpdateSeq,ackSeq,snd_nxt] ..."); build the peer that way outside this repository
(REFERENCE.md §9.2.1, docs/VALIDATION.md).

  tools/hpcc_fairness.py --fabsim build/release/apps/fabsim/fabsim \\
      [--hpcc /work/peers/hpcc/simulation] --payload 4096 --offsets 60:1050:47 --out DIR
  tools/hpcc_fairness.py ... --payload 1000 --rate-ai 2500Mbps   (the paper's W_AI for N = 2)
"""
import argparse
import csv
import os
import pathlib
import re
import statistics
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import hpcc_side_by_side as side  # noqa: E402  (run.py's config values)

FLOW_BYTES = 40_000_000
WINDOW = (900.0, 2400.0)  # us after the join

FABSIM_TOML = """[simulation]
stop_time = "100ms"
[topology]
kind = "single_switch"
hosts = 3
nic_rate = "100Gbps"
host_link_delay = "1us"
[network.pfc]
enabled = false
[transport]
kind = "roce"
payload = "{payload}B"
cc = "hpcc"
[transport.hpcc]
{rate_ai}
[workload]
kind = "flows"
[[workload.flows]]
src = 1
dst = 0
bytes = "{bytes}B"
[[workload.flows]]
src = 2
dst = 0
bytes = "{bytes}B"
start = "{offset}us"
[output]
trace = true
"""

NS3_TOPOLOGY = """4 1 3
3
0 3 100Gbps 0.001ms 0
1 3 100Gbps 0.001ms 0
2 3 100Gbps 0.001ms 0
"""


def goodput(series, a, b):
    """Gb/s between times a and b (us) of a cumulative byte series [(t_us, bytes)]."""
    def at(t):
        v = 0
        for tt, s in series:
            if tt > t:
                break
            v = s
        return v
    return (at(b) - at(a)) * 8 / ((b - a) * 1e3)


def run_fabsim(fabsim, out, offset, payload, rate_ai, sets):
    d = out / f"fabsim-{offset}"
    out.mkdir(parents=True, exist_ok=True)
    toml = FABSIM_TOML.format(payload=payload, bytes=FLOW_BYTES, offset=offset,
                              rate_ai=f'rate_ai = "{rate_ai}"' if rate_ai else "")
    scenario = out / f"fabsim-{offset}.toml"
    scenario.write_text(toml)
    p = subprocess.run([fabsim, "run", str(scenario), "--out", str(d)] +
                       [a for kv in sets for a in ("--set", kv)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"fabsim failed ({p.returncode}):\n{p.stderr[-2000:]}")
    series = {}
    for r in csv.DictReader((d / "trace.csv").open()):
        if r["event"] == "r":
            s = series.setdefault(r["flow"], [])
            s.append((int(r["time_ps"]) / 1e6, (s[-1][1] if s else 0) + int(r["bytes"])))
    return [series.get("0", []), series.get("1", [])]


def run_ns3(hpcc, out, offset, payload, rate_ai):
    d = out / f"ns3-{offset}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "topology.txt").write_text(NS3_TOPOLOGY)
    start2 = 2 + offset * 1e-6
    (d / "flow.txt").write_text(f"2\n1 0 3 100 {FLOW_BYTES} 2.000000000\n"
                                f"2 0 3 100 {FLOW_BYTES} {start2:.9f}\n")
    (d / "trace.txt").write_text("0\n\n")
    cfg = dict(side.COMMON, **side.PER_CC["hpcc"])
    cfg.update({"PACKET_PAYLOAD_SIZE": str(payload),
                "TOPOLOGY_FILE": str(d / "topology.txt"), "FLOW_FILE": str(d / "flow.txt"),
                "TRACE_FILE": str(d / "trace.txt"), "TRACE_OUTPUT_FILE": str(d / "mix.tr"),
                "FCT_OUTPUT_FILE": str(d / "fct.txt"), "PFC_OUTPUT_FILE": str(d / "pfc.txt"),
                "QLEN_MON_FILE": str(d / "qlen.txt"), "QLEN_MON_START": "2000000000",
                "QLEN_MON_END": "2000000000", "SIMULATOR_STOP_TIME": "2.1"})
    if rate_ai:
        cfg["RATE_AI"] = rate_ai.replace("Mbps", "Mb/s").replace("Gbps", "Gb/s")
    (d / "config.txt").write_text("".join(f"{k} {v}\n" for k, v in cfg.items()))
    p = subprocess.run([str(hpcc / "build" / "scratch" / "third"), str(d / "config.txt")],
                       cwd=str(hpcc), env={"LD_LIBRARY_PATH": str(hpcc / "build")},
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"ns-3 failed ({p.returncode}):\n{p.stderr[-2000:]}")
    series = {}
    for line in p.stdout.split("\n"):
        w = line.split()
        if len(w) < 7 or w[1] not in ("update", "fast"):
            continue
        m = re.search(r"\[(\d+),(\d+),(\d+)\]", line)
        if m:
            series.setdefault(w[2], []).append(((int(w[0]) - 2e9) / 1e3, int(m.group(2))))
    if len(series) != 2:
        sys.exit("ns-3 printed no per-ACK lines: build rdma-hw.cc with PRINT_LOG 1")
    return [series[k] for k in sorted(series)]


def summary(name, ratios):
    return (f"{name}: mean {statistics.mean(ratios):.3f}, median {statistics.median(ratios):.3f}, "
            f"min {min(ratios):.3f}, within 5 %: {sum(r >= 0.95 for r in ratios)} of {len(ratios)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fabsim", required=True)
    ap.add_argument("--hpcc", help="the peer's simulation/ directory, built with PRINT_LOG 1")
    ap.add_argument("--payload", type=int, default=4096, help="payload bytes per packet")
    ap.add_argument("--rate-ai", default="", help="R_AI, e.g. 2500Mbps (default run.py's)")
    ap.add_argument("--offsets", default="60:1050:47", help="first:last:step in us, or a,b,c")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a fabsim override, e.g. network.int.bytes_unit=512B (repeatable)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if ":" in args.offsets:
        a, b, s = (int(x) for x in args.offsets.split(":"))
        offsets = list(range(a, b + 1, s))
    else:
        offsets = [int(x) for x in args.offsets.split(",")]
    out = pathlib.Path(args.out).resolve()
    hpcc = pathlib.Path(args.hpcc).resolve() if args.hpcc else None
    rows = []
    print("| join offset (us) | fabsim Gb/s | fabsim ratio | ns-3 Gb/s | ns-3 ratio |")
    print("|---:|---:|---:|---:|---:|")
    for off in offsets:
        a, b = off + WINDOW[0], off + WINDOW[1]
        f = [goodput(s, a, b) for s in run_fabsim(args.fabsim, out, off, args.payload,
                                                    args.rate_ai, args.set)]
        fr = min(f) / max(f)
        n, nr = None, None
        if hpcc:
            n = [goodput(s, a, b) for s in run_ns3(hpcc, out, off, args.payload, args.rate_ai)]
            nr = min(n) / max(n)
        rows.append((off, fr, nr))
        ns_cells = f"{n[0]:.2f} / {n[1]:.2f} | {nr:.3f}" if n else "- | -"
        print(f"| {off} | {f[0]:.2f} / {f[1]:.2f} | {fr:.3f} | {ns_cells} |", flush=True)
    print(summary("fabsim", [r[1] for r in rows]))
    if hpcc:
        print(summary("ns-3", [r[2] for r in rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
