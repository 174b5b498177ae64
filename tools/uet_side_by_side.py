#!/usr/bin/python3
"""Runs fabsim's UET and uet-htsim (htsim_uec, built outside this repository) on the same flows,
the same fabric and the same wire, and prints the comparison tables of docs/VALIDATION.md
"Beside uet-htsim" and docs/PERFORMANCE.md (issue 17).

Usage:
  tools/uet_side_by_side.py --fabsim build/release/apps/fabsim/fabsim \\
      --htsim /path/to/uet-htsim/htsim/sim/datacenter --matrices DIR --out DIR [--rounds 1]
      [--only perm-ls1024,perm-ft1024,incast128,a2a128] [--no-htsim] [--huge-pages]

DIR holds the connection matrices made with htsim's own generators (seed 1):
  perm_1024n_2MB_s1.cm          gen_permutation.py  perm_1024n_2MB_s1.cm 1024 1024 2000000 0 1
  incast_1024n_128to1_2MB_s1.cm gen_incast.py       incast_1024n_128to1_2MB_s1.cm 1024 128 2000000 0 1 0
  a2a_128n_256KiB_s1.cm         gen_serialn_alltoall.py a2a_128n_256KiB_s1.cm 128 128 128 127 262144 0 1
  perm_8192n_2MB_s1.cm          gen_permutation.py  perm_8192n_2MB_s1.cm 8192 8192 2000000 0 1
                                (perm-ls8192 only: not in the default --only list)
Each matrix line "a->b id n start t size s" becomes a fabsim flow from a to b of s bytes at t us.

Both sides: 100 Gb/s and 1 us on every link, MTU 4,150 B (4,086 B payload + 64 B header), 64 B
control frames, no preamble/gap on the wire (htsim has none), no PFC, trimming at one BDP of
queue (htsim's rounding to whole MTUs) counting the frame on the wire and trimming the arriving
or the last queued packet at random (htsim's queue), ECN at 20 % / 80 % of it with probability
1 at the top, decided when the packet's last bit has left (htsim's completeService),
NSCC with htsim's derived parameters, the "mixed" entropy selection over 64 entropies, RUD, and
FCT measured at the sender when the last ACK arrives (htsim's "finished at" - "starting at").
htsim is run with -end 100000 (us) -seed 1. Wall time and peak RSS come from /usr/bin/time,
user time from the kernel's rusage of the command (in microseconds, with /usr/bin/time's own
1-2 ms); the anonymous peak (heap and anonymous mappings, without the file-backed pages of
the binary and shared libraries) is sampled from /proc/PID/status every millisecond.

Timing is paired: each round runs fabsim, then htsim, on the same scenario. The speed ratio
printed is the median over rounds of htsim's user time / fabsim's in the same round (with the
range when there are several rounds): on a noisy machine a ratio taken within one round is
stable where single runs are not. Times are each side's median; RSS each side's largest.

--huge-pages runs both sides with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc 2.35 and later):
malloc asks for transparent huge pages (the kernel's transparent_hugepage setting must be
"madvise" or "always"), so that a large heap costs fewer TLB misses. htsim's time depends on it
far more than fabsim's (docs/PERFORMANCE.md).
"""
import os
import argparse
import math
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

# name: (matrix, fabsim topology block, htsim topology file, trim threshold, ECN kmin, kmax)
# Thresholds as htsim derives them (REFERENCE.md §9.3.3): one BDP in whole 4,150 B packets.
LEAF_SPINE_1024 = """[topology]
kind = "leaf_spine"
servers = 1024
gpus_per_server = 1
servers_per_leaf = 32
spines = 32
nic_rate = "100Gbps"
uplink_rate = "100Gbps"
host_link_delay = "1us"
fabric_link_delay = "1us"
"""
# htsim's leaf_spine_8192_100g.topo: 128 leaves of 64 hosts, 64 uplinks each, 64 spines.
LEAF_SPINE_8192 = LEAF_SPINE_1024.replace("servers = 1024", "servers = 8192").replace(
    "servers_per_leaf = 32", "servers_per_leaf = 64").replace("spines = 32", "spines = 64")
FAT_TREE = """[topology]
kind = "fat_tree"
k = {k}
nic_rate = "100Gbps"
link_rate = "100Gbps"
host_link_delay = "1us"
fabric_link_delay = "1us"
"""
SCENARIOS = {
    "perm-ls1024": ("perm_1024n_2MB_s1.cm", LEAF_SPINE_1024, "leaf_spine_1024.topo", 120350, 24900, 99600),
    "perm-ft1024": ("perm_1024n_2MB_s1.cm", FAT_TREE.format(k=16), "fat_tree_1024.topo", 178450, 37350, 145250),
    "incast128": ("incast_1024n_128to1_2MB_s1.cm", LEAF_SPINE_1024, "leaf_spine_1024.topo", 120350, 24900, 99600),
    # Issue 18: receiver credit alone (htsim -receiver_cc_only) and with NSCC (-receiver_cc);
    # both turn ECN off on the ToR ports towards hosts.
    "incast128-credit": ("incast_1024n_128to1_2MB_s1.cm", LEAF_SPINE_1024, "leaf_spine_1024.topo", 120350, 24900, 99600),
    "incast128-both": ("incast_1024n_128to1_2MB_s1.cm", LEAF_SPINE_1024, "leaf_spine_1024.topo", 120350, 24900, 99600),
    "a2a128": ("a2a_128n_256KiB_s1.cm", FAT_TREE.format(k=8), "fat_tree_128_1os.topo", 178450, 37350, 145250),
    # Scale: the same two tiers, links and delays (so the same thresholds), eight times the hosts.
    "perm-ls8192": ("perm_8192n_2MB_s1.cm", LEAF_SPINE_8192, "leaf_spine_8192_100g.topo", 120350, 24900, 99600),
}
DEFAULT = ["perm-ls1024", "perm-ft1024", "incast128", "incast128-credit", "incast128-both", "a2a128"]


CREDIT = {"incast128-credit": ("none", ["-receiver_cc_only"]),
          "incast128-both": ("nscc", ["-receiver_cc"])}


def fabsim_toml(name, matrix, topo, trim, kmin, kmax, stop="100ms", uet=(), nscc=(), faults=(),
                ecn=(), trims=(), credit_cc=None):
    """The fabsim scenario of `name`. `uet`, `nscc`, `ecn`, `trims`: extra "key = value" lines
    for [transport.uet], [transport.nscc], [network.ecn], [network.trim]; `faults`:
    [[faults.events]] blocks. `credit_cc`: receiver credit on, with this window CC ("none" or
    "nscc"); None: as CREDIT says for `name`."""
    if credit_cc is None:
        cc, _ = CREDIT.get(name, ("nscc", []))
        credit = name in CREDIT
    else:
        cc, credit = credit_cc, True
    lines = [f'name = "uet-{name}"', "[simulation]", f'stop_time = "{stop}"', topo,
             "[network]", "preamble_ifg = false", 'nic_arbiter = "fifo"',
             "[network.buffer]", 'size = "1GiB"',
             "[network.pfc]", "enabled = false",
             "[network.ecn]", "enabled = true", f"kmin = {kmin}", f"kmax = {kmax}", "pmax = 1.0",
             'mark_at = "departure"',
             f"host_ports = {'false' if credit else 'true'}", *ecn,
             "[network.trim]", "enabled = true", f"threshold = {trim}", "last_hop_factor = 1.0",
             "count_on_wire = true", "random_victim = true", 'size = "64B"', *trims,
             "[transport]", 'kind = "uet"', "payload = 4086", "header_bytes = 64",
             "control_bytes = 64", f'cc = "{cc}"',
             "[transport.uet]", 'mode = "rud"', 'completion = "acked"', "pdc_close = false",
             'ack_delay = "0s"',  # htsim's receiver has no coalescing timer
             f"receiver_credit = {'true' if credit else 'false'}", *uet]
    if nscc:
        lines += ["[transport.nscc]", *nscc]
    lines += [*faults, "[workload]", 'kind = "flows"']
    for line in matrix.read_text().splitlines():
        m = re.match(r"\s*(\d+)->(\d+)\s+(?:id\s+\d+\s+)?start\s+(\d+)\s+size\s+(\d+)", line)
        if m:
            src, dst, start, size = m.groups()
            lines += ["[[workload.flows]]", f"src = {src}", f"dst = {dst}", f"bytes = {size}",
                      f'start = "{start}us"']
    lines += ["[output]", "flows_csv = true"]
    return "\n".join(lines) + "\n"


def timed(cmd, cwd=None, ok=(0,), env=None):
    """(wall s, peak RSS MiB, user s, stdout, peak anonymous MiB) of `cmd`; exits unless its
    status is in `ok`. Wall and peak RSS come from /usr/bin/time (the kernel's accounting of
    the command alone: a child forked from this script would carry this script's pages into
    its peak); user time from the kernel's rusage of /usr/bin/time and the command it waited
    for (os.wait4), in microseconds, where /usr/bin/time prints hundredths of a second (a 0.06 s
    run would be read to within a sixth of itself). It includes /usr/bin/time's own start, 1-2
    ms. The anonymous peak (heap, stacks and anonymous mappings: the
    simulation's own state, without the pages of the binary and the shared libraries mapped
    from files) is sampled every millisecond from /proc/PID/status's RssAnon, of which the
    kernel keeps no peak."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t, \
            tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(["/usr/bin/time", "-o", t.name, "-f", "%e %M %U"] + cmd, cwd=cwd,
                             stdout=out, stderr=err, text=True, env=env)
        anon_kb = 0
        usage = None
        while usage is None:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                usage = ru
                p.returncode = os.waitstatus_to_exitcode(status)
                break
            try:
                with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                    kids = f.read().split()
                for kid in kids:
                    with open(f"/proc/{kid}/status") as f:
                        for line in f:
                            if line.startswith("RssAnon:"):
                                anon_kb = max(anon_kb, int(line.split()[1]))
            except OSError:
                pass  # not started yet, or exited between the reads
            time.sleep(0.001)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        wall, rss, _ = t.read().split()[-3:]
        user = usage.ru_utime
    if p.returncode not in ok:
        sys.exit(f"{cmd[0]} failed ({p.returncode}):\n{stdout[-2000:]}\n{stderr[-2000:]}")
    return float(wall), int(rss) / 1024, float(user), stdout, anon_kb / 1024


def summary(runs):
    """Median wall, largest RSS, median user time and largest anonymous peak of (wall, rss,
    user, anon) runs."""
    return (statistics.median(r[0] for r in runs), max(r[1] for r in runs),
            statistics.median(r[2] for r in runs), max(r[3] for r in runs))


def pct(xs, q):
    xs = sorted(xs)
    return xs[max(1, math.ceil(q / 100 * len(xs))) - 1]


def fabsim_fcts(out):
    fcts, delivered = [], 0
    with (out / "flows.csv").open() as f:
        head = f.readline().strip().split(",")
        for row in f:
            r = dict(zip(head, row.strip().split(",")))
            if r.get("end_ps"):
                fcts.append((int(r["end_ps"]) - int(r["start_ps"])) / 1e6)
    import json
    s = json.load((out / "summary.json").open())
    delivered = s["network"]["data_packets_delivered"]
    return fcts, delivered


def htsim_fcts(log):
    starts, ends = {}, {}
    pkts = None
    for line in log.splitlines():
        m = re.match(r"Flow \S+ flowId (\d+) .*? starting at ([\d.e+-]+)", line)
        if m:
            starts[int(m.group(1))] = float(m.group(2))
            continue
        m = re.match(r"Flow \S+ flowId (\d+) .*? finished at ([\d.e+-]+)", line)
        if m:
            ends[int(m.group(1))] = float(m.group(2))
            continue
        m = re.match(r"New: (\d+) Rtx: (\d+)", line)
        if m:
            pkts = int(m.group(1)) + int(m.group(2))
    return [ends[k] - starts[k] for k in ends], pkts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabsim", required=True)
    ap.add_argument("--htsim", help="uet-htsim's htsim/sim/datacenter directory (built)")
    ap.add_argument("--matrices", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", default=",".join(DEFAULT))
    ap.add_argument("--no-htsim", action="store_true")
    ap.add_argument("--huge-pages", action="store_true",
                    help="both sides' malloc on transparent huge pages (GLIBC_TUNABLES)")
    args = ap.parse_args()
    if not args.no_htsim and not args.htsim:
        ap.error("--htsim DIR is required unless --no-htsim is given")
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    mats = pathlib.Path(args.matrices).resolve()
    rows = []
    env = None
    if args.huge_pages:
        env = dict(os.environ)
        env["GLIBC_TUNABLES"] = "glibc.malloc.hugetlb=1"
    for name in args.only.split(","):
        matrix, topo, htopo, trim, kmin, kmax = SCENARIOS[name]
        toml = out / f"{name}.toml"
        toml.write_text(fabsim_toml(name, mats / matrix, topo, trim, kmin, kmax))
        runs = {"f": [], "h": []}
        for _ in range(args.rounds):
            fw, frss, fu, _, fanon = timed([args.fabsim, "run", str(toml), "--out", str(out / name)],
                                           env=env)
            runs["f"].append((fw, frss, fu, fanon))
            if not args.no_htsim:
                hbin = pathlib.Path(args.htsim)
                hw, hrss, hu, log, hanon = timed([str(hbin / "htsim_uec"), "-tm", str(mats / matrix), "-topo",
                                           str(hbin / "topologies" / htopo), "-end", "100000",
                                           "-seed", "1"] + CREDIT.get(name, ("", []))[1],
                                          cwd=str(out), env=env)  # it writes files to cwd
                (out / f"{name}.htsim.log").write_text(log)
                runs["h"].append((hw, hrss, hu, hanon))
        ff, fpk = fabsim_fcts(out / name)
        row = {"name": name, "flows": len(ff), "f": summary(runs["f"]), "fpk": fpk,
               "fp50": pct(ff, 50), "fp99": pct(ff, 99), "fmax": max(ff)}
        if not args.no_htsim:
            hf, hpk = htsim_fcts((out / f"{name}.htsim.log").read_text())
            ratios = [h[2] / max(f[2], 1e-9) for f, h in zip(runs["f"], runs["h"])]
            row.update({"h": summary(runs["h"]), "ratio": (statistics.median(ratios), min(ratios),
                                                           max(ratios)), "hpk": hpk, "hflows": len(hf), "hp50": pct(hf, 50),
                        "hp99": pct(hf, 99), "hmax": max(hf)})
        rows.append(row)
        print(name, row, flush=True)

    print("\n| scenario | flows | FCT p50 fabsim / htsim (us) | p99 | max (last completion) |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        def cell(a, b):
            return f"{r[a]:,.1f} / {r[b]:,.1f} ({(r[a] / r[b] - 1) * 100:+.1f} %)" if b in r else f"{r[a]:,.1f}"
        print(f"| {r['name']} | {r['flows']} | {cell('fp50', 'hp50')} | {cell('fp99', 'hp99')} | "
              f"{cell('fmax', 'hmax')} |")
    print("\n| scenario | data packets fabsim | packets sent htsim | fabsim wall / user | htsim wall / user"
          " | user-time ratio (median of rounds) | peak RSS fabsim / htsim | anonymous fabsim / htsim |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        fw, frss, fu, fanon = r["f"]
        if "h" in r:
            hw, hrss, hu, hanon = r["h"]
            med, lo, hi = r["ratio"]
            spread = f" ({lo:.1f}-{hi:.1f}x)" if hi > lo else ""
            print(f"| {r['name']} | {r['fpk']:,} | {r['hpk']:,} | {fw:.2f} s / {fu:.3f} s | "
                  f"{hw:.2f} s / {hu:.3f} s | {med:.1f}x{spread} | {frss:.1f} / {hrss:.1f} MiB "
                  f"(1/{hrss / frss:.1f}) | {fanon:.1f} / {hanon:.1f} MiB (1/{hanon / fanon:.1f}) |")
        else:
            print(f"| {r['name']} | {r['fpk']:,} | | {fw:.2f} s / {fu:.3f} s | | | {frss:.1f} MiB | "
                  f"{fanon:.1f} MiB |")


if __name__ == "__main__":
    main()
