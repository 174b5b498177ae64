#!/usr/bin/python3
"""Seed 001 (credit waste under many-to-many traffic): writes the scenarios
scenarios/seed001-*.toml, runs each without and with transport.uet.credit_waste_fix, and
prints the table of docs/VALIDATION.md "Seed 001" (wasted credit, receiver link utilisation,
FCT p99, last completion) and draws issued vs used credit of one receiver.

  tools/seed001.py write                       # (re)writes scenarios/seed001-*.toml
  tools/seed001.py run --fabsim BIN --out DIR  # runs them; table on stdout, plots in DIR
"""
import argparse
import csv
import json
import pathlib
import random
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
HOSTS = 128

HEADER = """# Seed 001 (docs/VALIDATION.md "Seed 001"): {what}
# Written by tools/seed001.py write; run with and without the fix by tools/seed001.py run.
name = "seed001-{name}"
[simulation]
stop_time = "100ms"
seed = 1
[topology]
kind = "leaf_spine"
servers = 128
gpus_per_server = 1
servers_per_leaf = 16
spines = 16
nic_rate = "100Gbps"
uplink_rate = "100Gbps"
host_link_delay = "1us"
fabric_link_delay = "1us"
[network]
preamble_ifg = true
[network.pfc]
enabled = false
[network.ecn]
host_ports = false
[network.trim]
enabled = true
[transport]
kind = "uet"
payload = 4086
cc = "none"
[transport.uet]
receiver_credit = true
credit_waste_fix = false
credit_trace_host = {trace}
[output]
flows_csv = true
"""


def flows_block(flows, size):
    out = ['[workload]', 'kind = "flows"']
    for s, d in flows:
        out += ['[[workload.flows]]', f'src = {s}', f'dst = {d}', f'bytes = "{size}"']
    return "\n".join(out) + "\n"


def shared_senders():
    """8 busy senders each send to 4 receivers at once; each receiver also has one lone
    sender that sends nowhere else. A receiver's pacer splits credit between a sender that can
    use a quarter of its NIC for it and one that can use all of it."""
    busy = list(range(0, 8))
    lone = list(range(16, 48))
    recv = list(range(64, 96))
    flows = []
    for i, r in enumerate(recv):
        flows.append((busy[i // 4], r))
        flows.append((lone[i], r))
    return flows, recv[0]


def fanout4():
    """Every host sends to 4 others at once, chosen at random (seeded): each host's NIC is
    shared by 4 receivers' credit, and receivers have 0 to ~10 senders."""
    rng = random.Random(1)
    flows = []
    for s in range(HOSTS):
        dsts = rng.sample([h for h in range(HOSTS) if h != s], 4)
        flows += [(s, d) for d in dsts]
    indeg = {}
    for _, d in flows:
        indeg[d] = indeg.get(d, 0) + 1
    return flows, max(indeg, key=lambda h: (indeg[h], -h))


def alltoall_job():
    return """[workload]
kind = "jobs"
[[workload.jobs]]
name = "a2a"
placement = "block"
ranks = 32
first = 0
count = 4
[[workload.jobs.ops]]
type = "alltoall"
bytes = "8MiB"
"""


def write():
    sh, sh_trace = shared_senders()
    fo, fo_trace = fanout4()
    files = {
        "shared-senders": (HEADER.format(what="8 senders shared by 4 receivers each, every "
                                         "receiver also fed by one sender of its own; 2 MB "
                                         "flows, receiver credit alone",
                                         name="shared-senders", trace=sh_trace)
                           + flows_block(sh, "2MB")),
        "fanout4": (HEADER.format(what="every host sends 2 MB to 4 random others at once, "
                                  "receiver credit alone", name="fanout4", trace=fo_trace)
                    + flows_block(fo, "2MB")),
        "alltoall": (HEADER.format(what="4 jobs of 32 ranks, each an AllToAll of 8 MiB per "
                                   "rank (many-to-many), receiver credit alone",
                                   name="alltoall", trace=0)
                     + alltoall_job()),
    }
    for name, text in files.items():
        (ROOT / "scenarios" / f"seed001-{name}.toml").write_text(text)
        print(f"wrote scenarios/seed001-{name}.toml")


LINE = 100e9
MSS, HDR = 4086, 102


def frame_bytes(b):
    return b + -(-b // MSS) * HDR


def measure(out):
    """Wasted credit, receiver link utilisation, FCT p99 and the last completion of one run."""
    s = json.load((out / "summary.json").open())
    counters = s["transport"]
    rows = list(csv.DictReader((out / "flows.csv").open()))
    fcts = sorted(int(r["fct_ps"]) / 1e6 for r in rows if int(r["fct_ps"]) >= 0)
    per_recv = {}
    for r in rows:
        d = per_recv.setdefault(r["dst"], [0, None, 0])
        d[0] += frame_bytes(int(r["bytes"]))
        start = int(r["start_ps"])
        d[1] = start if d[1] is None else min(d[1], start)
        d[2] = max(d[2], int(r["end_ps"]))
    util = [b * 8 / ((end - start) / 1e12) / LINE for b, start, end in per_recv.values()
            if end > start]
    jobs = s.get("jobs") or []
    return {
        "issued": counters["credit_issued"], "wasted": counters["credit_wasted"],
        "clipped": counters["credit_clipped"], "expired": counters["credit_expired"],
        "flagged": counters["credit_flagged"], "util": sum(util) / len(util),
        "util_min": min(util),
        "p99": fcts[max(0, -(-99 * len(fcts) // 100) - 1)], "last": fcts[-1],
        # An unfinished job has no JCT (null): the largest of the finished ones, if any.
        "jct": max((j["jct_ps"] / 1e6 for j in jobs if j["jct_ps"] is not None), default=None),
        "done": len(fcts) == len(rows),
    }


def plot_trace(out, title, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for tag, style in (("no fix", "-"), ("fix", "--")):
        rows = list(csv.DictReader((out[tag] / "credit_trace.csv").open()))
        t = [float(r["time_us"]) for r in rows]
        ax.plot(t, [int(r["issued_bytes"]) / 1e6 for r in rows], style, label=f"issued ({tag})")
        ax.plot(t, [int(r["used_bytes"]) / 1e6 for r in rows], style, label=f"used ({tag})")
    ax.set_xlabel("time (us)")
    ax.set_ylabel("cumulative credit (MB)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def run(fabsim, out_dir):
    out_dir = pathlib.Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    print("| scenario | divide_pull_target | fix | credit issued (MB) | wasted (MB) | wasted / "
          "issued | flagged packets | receiver link utilisation mean (min) | FCT p99 (us) | "
          "last completion (us) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in ("shared-senders", "fanout4", "alltoall"):
        for divide in ("true", "false"):
            outs = {}
            for fix in ("false", "true"):
                tag = "fix" if fix == "true" else "no fix"
                out = out_dir / f"{name}-divide_{divide}-fix_{fix}"
                cmd = [fabsim, "run", str(ROOT / "scenarios" / f"seed001-{name}.toml"),
                       "--set", f"transport.uet.credit_waste_fix={fix}",
                       "--set", f"transport.uet.divide_pull_target={divide}",
                       "--out", str(out)]
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
                m = measure(out)
                outs[tag] = out
                last = m["jct"] if m["jct"] is not None else m["last"]
                print(f"| {name} | {divide} | {'on' if fix == 'true' else 'off'} | "
                      f"{m['issued'] / 1e6:,.1f} | {m['wasted'] / 1e6:,.2f} | "
                      f"{m['wasted'] / m['issued'] * 100:.1f} % | {m['flagged']:,} | "
                      f"{m['util']:.3f} ({m['util_min']:.3f}) | {m['p99']:,.1f} | {last:,.1f} |",
                      flush=True)
            plot_trace(outs, f"seed001-{name}, divide_pull_target={divide}",
                       out_dir / f"credit-{name}-divide_{divide}.png")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["write", "run"])
    ap.add_argument("--fabsim")
    ap.add_argument("--out", default="/tmp/seed001")
    a = ap.parse_args()
    if a.cmd == "write":
        write()
    else:
        if not a.fabsim:
            sys.exit("run needs --fabsim")
        run(a.fabsim, a.out)
