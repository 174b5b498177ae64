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
kind = "alltoall"
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


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["write", "run"])
    ap.add_argument("--fabsim")
    ap.add_argument("--out", default="/tmp/seed001")
    a = ap.parse_args()
    if a.cmd == "write":
        write()
