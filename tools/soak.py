#!/usr/bin/python3
"""Random-scenario soak (issue 14 item 8; docs/ROBUSTNESS.md): generates valid scenarios across
every kind of every family (topology, routing, fabric, faults, loss and bit errors, PFC, ECN,
security, transport, congestion control, workload, sweeps, outputs), each small enough to run in
well under a second, runs each twice with `fabsim run FILE --out DIR` and checks:

  - the exit code is 0 (complete) or 3 (unfinished flows or failed senders); 2 (bad input) means
    the generator wrote an invalid scenario, a bug of this script; 1 or a signal is a finding;
  - exit 0 only where no summary.json says "all_flows_done": false;
  - each run ends within the wall-time guard (--timeout);
  - both runs give the same exit code and byte-identical result files: summary.json, flows.csv
    and the others (determinism);
  - where a summary.json has a "ledger", its "balanced" is true (conservation: every packet
    injected is delivered, dropped with a cause, or still held at the end);
  - a reliable transport (RoCE, RLTP, UET but UUD) never goes still unfinished without a failed
    sender: summary.json's "stalled_at_ps" (nothing left to happen, no packet and no timer) with
    "failed_senders": 0 is a deadlock.

The scenarios are a function of --seed alone. A failing scenario is saved under --findings with
the reason, and the command that reproduces it is printed. Exit 0 when nothing was found.

  soak.py --fabsim BIN --count N --seed S [--timeout SEC] [--findings DIR] [--emit DIR]

--emit DIR writes the scenarios without running them (seeds for the loader's fuzzer).
"""
import argparse
import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib

# Durations, sizes and rates the generator draws from (small: a run takes milliseconds).
NIC_RATES = ["25Gbps", "50Gbps", "100Gbps"]
FABRIC_RATES = ["50Gbps", "100Gbps", "200Gbps", "400Gbps"]
DELAYS = ["100ns", "500ns", "1us", "2us"]
FLOW_SIZES = ["1B", "1KB", "4KiB", "16KiB", "64KiB", "100KB", "256KiB", "1MiB"]
COLLECTIVE_SIZES = ["1KiB", "8KiB", "64KiB", "256KiB", "1MiB"]
COLLECTIVES = ["allreduce_ring", "allreduce_tree", "alltoall", "alltoall_pairwise", "allgather",
               "reducescatter", "sendrecv"]
SECURITY = ["none", "physec_link", "physec_channel", "macsec", "ipsec", "psp"]


class Shape:
    """What the workload and fault generators need to know of a topology."""

    def __init__(self, hosts, servers, gpus, tiers, cables):
        self.hosts = hosts
        self.servers = servers  # 0: no servers (placement by server is refused)
        self.gpus = gpus
        self.tiers = tiers
        self.cables = cables  # switch-to-switch cable names


def pick(rng, *choices):
    return rng.choice(choices)


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def two_tier(rng, topo, rail):
    while True:
        servers = rng.randint(1, 4)
        gpus = rng.randint(2, 4) if rail else pick(rng, 1, 2, 4)
        if servers * gpus >= 2:
            break
    spines = rng.randint(1, 3)
    links = pick(rng, 1, 1, 2)
    topo.update(servers=servers, gpus_per_server=gpus, spines=spines, links_per_spine=links,
                nic_rate=pick(rng, *NIC_RATES), uplink_rate=pick(rng, *FABRIC_RATES),
                host_link_delay=pick(rng, *DELAYS), fabric_link_delay=pick(rng, *DELAYS))
    if rail:
        group = pick(rng, 0, *divisors(servers))
        topo["servers_per_group"] = group
        leaves = (servers // (group or servers)) * gpus
        prefix = "rail"
    else:
        per_leaf = rng.choice(divisors(servers))
        attach = pick(rng, "server", "server", "rail")
        topo.update(servers_per_leaf=per_leaf, attach=attach)
        leaves = servers // per_leaf * (gpus if attach == "rail" else 1)
        prefix = "leaf"
    if rng.random() < 0.2:
        topo["spine_link_delays"] = [pick(rng, *DELAYS) for _ in range(spines)]
    cables = []
    for leaf in range(leaves):
        for spine in range(spines):
            base = f"{prefix}{leaf}-spine{spine}"
            cables += [base] if links == 1 else [f"{base}#{k}" for k in range(links)]
    return Shape(servers * gpus, servers, gpus, 2, cables)


def fat_tree(rng, topo):
    k = pick(rng, 2, 4, 4)
    tor_ratio = pick(rng, 1, 1, 2)
    agg_ratio = pick(rng, 1, 2) if k == 4 else 1
    per_tor = k // 2 * tor_ratio
    gpus = rng.choice(divisors(per_tor))
    topo.update(k=k, tor_oversubscription=tor_ratio, agg_oversubscription=agg_ratio,
                gpus_per_server=gpus, nic_rate=pick(rng, *NIC_RATES),
                link_rate=pick(rng, *FABRIC_RATES), host_link_delay=pick(rng, *DELAYS),
                fabric_link_delay=pick(rng, *DELAYS))
    half, up = k // 2, k // 2 // agg_ratio
    cables = [f"tor{p}_{i}-agg{p}_{j}" for p in range(k) for i in range(half) for j in range(half)]
    cables += [f"agg{p}_{j}-core{j * up + u}" for p in range(k) for j in range(half)
               for u in range(up)]
    hosts = k * half * per_tor
    return Shape(hosts, hosts // gpus, gpus, 3, cables)


def topology(rng, sc):
    kind = pick(rng, "leaf_spine", "rail", "fat_tree", "single_switch")
    topo = sc["topology"] = {"kind": kind}
    if kind == "single_switch":
        hosts = rng.randint(2, 12)
        topo.update(hosts=hosts, nic_rate=pick(rng, *NIC_RATES),
                    host_link_delay=pick(rng, *DELAYS))
        return Shape(hosts, 0, 1, 1, [])
    if kind == "fat_tree":
        return fat_tree(rng, topo)
    return two_tier(rng, topo, kind == "rail")


def network(rng, sc):
    net = sc["network"] = {}
    if rng.random() < 0.3:
        net["loss_probability"] = pick(rng, 1e-4, 1e-3, 0.01, 0.05, 0.3)
    if rng.random() < 0.2:
        net["ber"] = pick(rng, 1e-9, 1e-6, 1e-5, 1e-4)
        net["fec"] = pick(rng, "rs544", "rs544", "none")
    if rng.random() < 0.2:
        net["preamble_ifg"] = False
    net["buffer"] = {"size": pick(rng, "16KiB", "64KiB", "256KiB", "1MiB", "4MiB", "32MiB")}
    if rng.random() < 0.3:
        net["buffer"]["egress_alpha"] = pick(rng, 0.25, 1, 4)
    if rng.random() < 0.2:
        net["buffer"]["reserve"] = pick(rng, 0, "16KiB")
    pfc = net["pfc"] = {"enabled": rng.random() < 0.6}
    if pfc["enabled"]:
        pfc["lossless_classes"] = pick(rng, [3], [3], [2, 3], [0, 3])
        if rng.random() < 0.3:
            pfc.update(threshold="static", xoff=pick(rng, "32KiB", "128KiB"), xon="16KiB")
        elif rng.random() < 0.3:
            pfc["alpha"] = pick(rng, 0.0625, 0.125, 0.5)
        if rng.random() < 0.2:
            pfc.update(headroom=pick(rng, "8KiB", "64KiB"), response_time=pick(rng, 0, "1us"),
                       pause_quanta=pick(rng, 1, 512, 65535))
    ecn = net["ecn"] = {"enabled": rng.random() < 0.7}
    if ecn["enabled"] and rng.random() < 0.5:
        ecn.update(kmin=pick(rng, "5KB", "20KB"), kmax=pick(rng, "100KB", "400KB"),
                   pmax=pick(rng, 0.01, 0.1, 1.0))
    if ecn["enabled"] and rng.random() < 0.3:
        ecn.update(mark_at=pick(rng, "dequeue", "departure"), host_ports=rng.random() < 0.5)
        rate = pick(rng, "25Gbps", "100Gbps")
        # A reference rate scales absolute thresholds only (UET's default is BDP fractions).
        if "kmin" in ecn:
            ecn["reference_rate"] = rate
        elif rng.random() < 0.5:
            ecn.update(kmin_bdp=pick(rng, 0.2, 0.5), kmax_bdp=pick(rng, 0.8, 2.0))
    if rng.random() < 0.2:
        net["nic_arbiter"] = pick(rng, "ring", "fifo")
    if rng.random() < 0.25:
        trim = net["trim"] = {"enabled": True}
        if rng.random() < 0.5:
            trim.update(threshold=pick(rng, 0, "8KiB", "64KiB"),
                        last_hop_factor=pick(rng, 1.0, 1.5), on_overflow=rng.random() < 0.7,
                        count_on_wire=rng.random() < 0.5, random_victim=rng.random() < 0.5,
                        reference_rate=pick(rng, "25Gbps", "100Gbps"),
                        size=pick(rng, 0, "64B", "80B"),
                        header_queue=pick(rng, 0, "512B", "64KiB"),
                        share=pick(rng, 1.0, 0.5, 0.25))
    if rng.random() < 0.1:
        net["int"] = {"time_unit": pick(rng, 0, "1ns"), "bytes_unit": pick(rng, 0, "128B"),
                      "qlen_unit": pick(rng, 0, "80B")}
    if "loss_probability" not in net and rng.random() < 0.1:
        net["loss"] = {"model": "gilbert", "p": pick(rng, 1e-4, 1e-3), "r": pick(rng, 0.1, 0.5),
                       "loss_bad": pick(rng, 0.5, 1.0), "loss_good": pick(rng, 0, 1e-5),
                       "links": pick(rng, "all", "host_up", "host_down", "hosts", "fabric")}


def routing_and_fabric(rng, sc, shape):
    policy = pick(rng, "ecmp", "spray", "flowlet")
    sc["routing"] = {"policy": policy}
    if policy == "flowlet":
        sc["routing"]["flowlet_gap"] = pick(rng, "1us", "10us", "50us")
    if shape.tiers < 2 or rng.random() < 0.5:
        sc["fabric"] = {"kind": "ethernet"}
        return
    mode = pick(rng, "n2n", "n2n", "e2e")
    gse = {"mode": mode,
           "container": pick(rng, "4KiB", "8KiB", "16KiB", "32KiB"),
           "container_rule": pick(rng, "cumulative", "overflow"),
           "path": pick(rng, "index", "least_queued", "weighted", "adaptive"),
           "reorder_timeout": pick(rng, "20us", "100us")}
    if rng.random() < 0.05:
        gse["container"] = pick(rng, "64B", "1KiB")  # smaller than one packet
    if rng.random() < 0.2:
        gse.update(fault_flush=pick(rng, "1us", "20us"), notice_hop=pick(rng, "100ns", "2us"),
                   detect=pick(rng, "100ns", "5us"), monitor_window=pick(rng, "1us", "10us"),
                   ber_threshold=pick(rng, 1e-6, 2.4e-4), publish_interval=pick(rng, "1us", "5us"))
    if mode == "n2n" and rng.random() < 0.5:
        gse["dgsq"] = True
        gse["grant_quantum"] = pick(rng, "4KiB", "16KiB")
        if rng.random() < 0.3:
            gse.update(voq_ecn=True, grant_gate=pick(rng, 0, "32KiB"),
                       source_gate=pick(rng, 0, "32KiB"), gate_lookahead=rng.random() < 0.5, transit_caps=rng.random() < 0.7)
        if rng.random() < 0.2:
            gse.update(grant_rate=pick(rng, 0.5, 1.0), transit_share=pick(rng, 0.5, 0.97),
                       voq_pool_queues=pick(rng, 0, 1, 16), voq_pool_bytes=pick(rng, 0, "64KiB"))
        if rng.random() < 0.1:
            gse["grant_weights"] = [pick(rng, "1", "3", "0.5") for _ in range(2)]
    sc["fabric"] = {"kind": "gse", "gse": gse}


def faults(rng, sc, shape, stop_us):
    if not shape.cables or rng.random() < 0.6:
        return
    sc["faults"] = {"reconverge_local": pick(rng, "10us", "100us"),
                    "reconverge": pick(rng, "50us", "500us"), "events": []}
    for _ in range(rng.randint(1, 2)):
        action = pick(rng, "down", "up", "flap", "ber", "degrade")
        ev = {"link": rng.choice(shape.cables), "action": action,
              "at": f"{rng.randint(0, stop_us // 4)}us"}
        if action == "flap":
            ev.update(down_for=pick(rng, "1ns", "5us", "50us"), up_for=pick(rng, "5us", "50us"),
                      count=rng.randint(1, 5))
        elif action == "ber":
            ev["ber"] = pick(rng, 1e-6, 1e-4, 1e-3)
        elif action == "degrade":
            ev.update(rate_factor=pick(rng, 0.1, 0.25, 0.5, 1.0),
                      direction=pick(rng, "both", "up", "down"))
        sc["faults"]["events"].append(ev)


def security(rng, sc):
    kind = pick(rng, *SECURITY)
    sc["security"] = {"kind": kind}
    if kind != "none" and rng.random() < 0.3:
        sc["security"]["latency"] = pick(rng, 0, "50ns", "300ns")
    if kind in ("macsec", "ipsec", "psp") and rng.random() < 0.3:
        sc["security"]["bytes"] = pick(rng, 0, 16, 64)
    if kind == "physec_channel" and rng.random() < 0.3:
        sc["security"]["segment_blocks"] = pick(rng, 1, 64, 4096)


CCS = ["dcqcn", "none", "timely", "hpcc", "swift", "nscc"]


def cc_params(rng, tr, cc):
    """Changed parameters of the chosen congestion control, sometimes."""
    if rng.random() >= 0.3:
        return
    if cc == "timely":
        tr["timely"] = {"t_low": pick(rng, "5us", "20us"), "t_high": pick(rng, "20us", "500us"),
                        "min_rtt": pick(rng, "2us", "20us"), "beta": pick(rng, 0.5, 0.8),
                        "hai_after": rng.randint(1, 5)}
    elif cc == "hpcc":
        tr["hpcc"] = {"eta": pick(rng, 0.9, 0.95), "max_stage": pick(rng, 0, 5),
                      "base_rtt": pick(rng, 0, "5us", "20us"),
                      "int_header_bytes": pick(rng, 0, 42)}
    elif cc == "swift":
        tr["swift"] = {"base_target": pick(rng, "5us", "20us"), "ai": pick(rng, 0.5, 1, 4),
                       "max_cwnd": pick(rng, 0, 10, 100), "initial_cwnd": pick(rng, 0, 0.5, 8),
                       "delay_ewma": pick(rng, 1, 0.25)}
    elif cc == "nscc":
        tr["nscc"] = {"target_factor": pick(rng, 0, 0.75, 2), "quick_adapt": rng.random() < 0.7,
                      "maxwnd_bdp": pick(rng, 1.0, 1.5, 4.0), "gamma": pick(rng, 0.5, 0.8),
                      "track_base_rtt": rng.random() < 0.7}


def dcqcn_params(rng, tr):
    dcqcn = tr["dcqcn"] = {"enabled": rng.random() < 0.8}
    if dcqcn["enabled"]:
        dcqcn["preset"] = pick(rng, "paper", "connectx")
        if rng.random() < 0.3:
            dcqcn.update(g=pick(rng, 1 / 256, 0.5), min_rate=pick(rng, "10Mbps", "1Gbps"),
                         rate_ai=pick(rng, "5Mbps", "1Gbps"),
                         cnp_interval=pick(rng, "1us", "50us"))


def irn_params(rng, tr):
    if rng.random() < 0.5:
        tr["irn"] = {"rto_low": pick(rng, "5us", "20us"), "rto_high": pick(rng, "20us", "320us"),
                     "low_packets": rng.randint(1, 4), "bdp_cap": pick(rng, 0, "8KiB", "64KiB"),
                     "timers": pick(rng, "irn", "irn", "ib")}


def roce_like(rng, sc, tr, kind):
    """Keys RoCE and RLTP share: queue pairs, ACKs, timeouts, the operation, the CC."""
    tr.update(qps_per_connection=pick(rng, 1, 1, 2, 4), ack_every_packets=pick(rng, 1, 1, 4),
              rto_base=pick(rng, "1us", "4.096us"), rto_exponent=rng.randint(2, 8),
              retry_limit=rng.randint(0, 7), rto_backoff=rng.random() < 0.3)
    if rng.random() < 0.2:
        tr["max_inflight"] = pick(rng, "4KiB", "16KiB", "64KiB")
    if rng.random() < 0.2:
        tr["ack_every_bytes"] = pick(rng, "1KiB", "64KiB")
    if rng.random() < 0.2:
        tr["nack_interval"] = pick(rng, "10us", "100us")
    if rng.random() < 0.2:
        tr["ack_class"] = "data"  # ACKs under their data class's PFC, at the NIC too
    if kind == "rltp":
        tr["op"] = pick(rng, "write", "read")
    elif rng.random() < 0.3:
        tr["op"] = pick(rng, "send", "write", "read")
    if rng.random() < 0.1:
        tr.update(command_latency=pick(rng, 0, "1us"), connection_setup=pick(rng, 0, "2us"),
                  qp_per_flow=rng.random() < 0.5, nic_jitter=pick(rng, 0, "100ns"))
    if kind == "roce" and rng.random() < 0.3:
        tr["recovery"] = "irn"
    if kind == "rltp" or tr.get("recovery") == "irn":
        irn_params(rng, tr)
    cc = pick(rng, "dcqcn", "dcqcn", *CCS) if rng.random() < 0.5 else None
    if cc is not None:
        tr["cc"] = cc
        cc_params(rng, tr, cc)
    if cc == "hpcc" and sc["network"]["ecn"].get("mark_at") == "departure":
        del sc["network"]["ecn"]["mark_at"]  # INT is stamped at dequeue, where RED reads too
    if cc == "hpcc" and sc["fabric"]["kind"] == "gse":
        tr["cc"] = "timely"  # HPCC needs one path per flow; GSE sprays containers
        tr.pop("hpcc", None)
    elif cc == "hpcc" and sc["routing"]["policy"] == "spray":
        sc["routing"]["policy"] = "ecmp"  # the same (scenario.cpp refuses HPCC with spraying)
    if cc == "dcqcn" or cc is None and kind == "roce":  # RLTP's default is none
        dcqcn_params(rng, tr)


def uet(rng, sc, tr):
    """Ultra Ethernet: a PDS mode, entropy selection, receiver credit and its fix, the CC."""
    u = tr["uet"] = {"mode": pick(rng, "rud", "rud", "rod", "rudi", "uud"),
                     "lb": pick(rng, "oblivious", "bitmap", "reps", "mixed"),
                     "paths": pick(rng, 1, 4, 64)}
    if rng.random() < 0.3:
        u.update(ack_every=pick(rng, "4KiB", "16KiB", "64KiB"),
                 rto=pick(rng, 0, "5us", "50us"), max_window=pick(rng, 0, "16KiB", "256KiB"),
                 rto_backoff=pick(rng, 0, 0, 2, 6))
        if u["mode"] != "uud":  # UUD never retries: a limit is refused
            u["retry_limit"] = pick(rng, 0, 0, 1, 7)
    if rng.random() < 0.2:
        u.update(pdc_close=rng.random() < 0.5, close_after=pick(rng, "1us", "20us"),
                 lb_high_bits=rng.random() < 0.5)
        if u["mode"] != "uud":
            u["completion"] = pick(rng, "delivered", "acked")
    if rng.random() < 0.1:
        u.update(lb_reps_ring=pick(rng, 1, 8), lb_reps_freeze=pick(rng, "10us", "10ms"),
                 lb_reps_explore=pick(rng, 0, 16), lb_reps_freeze_on_timeout=rng.random() < 0.5)
    cc = pick(rng, "nscc", "nscc", "none", "timely", "swift")  # ECN echoed in ACKs: no CNP, no INT
    credit = u["mode"] in ("rud", "rod") and rng.random() < 0.3
    if credit:
        u["receiver_credit"] = True
        if rng.random() < 0.4:
            u.update(credit_waste_fix=True, fix_scope=pick(rng, "nic", "pdc"),
                     fix_flag=pick(rng, "ones", "zeros"), fix_beta=pick(rng, 0.25, 0.5))
        if rng.random() < 0.3:
            u.update(speculate=rng.random() < 0.5, spec_window=pick(rng, 0, "8KiB"),
                     pacer_fraction=pick(rng, 0.5, 0.99), credit_quantum=pick(rng, "256B", "4KiB"),
                     divide_pull_target=rng.random() < 0.5,
                     fabric_feedback=pick(rng, "auto", "on", "off"))
        if rng.random() < 0.3:
            cc = "none"
    elif cc == "none" and u["mode"] != "uud":
        cc = "nscc"  # without credit or a CC nothing bounds the flight: refused
    if rng.random() < 0.2:
        u["inflight_cap"] = pick(rng, "auto", "max_window") if cc == "none" and not credit \
            else pick(rng, "auto", "max_window", "none")
    tr["cc"] = cc
    cc_params(rng, tr, cc)


def transport(rng, sc):
    kind = pick(rng, "datagram", "roce", "roce", "rltp", "uet", "uet")
    tr = sc["transport"] = {"kind": kind, "payload": pick(rng, "1KiB", "2KiB", "4KiB", "4KiB")}
    if rng.random() < 0.2:
        tr["tclass"] = pick(rng, 0, 2, 3)
    if rng.random() < 0.1:
        tr["control_bytes"] = pick(rng, 64, 128)
        if kind != "rltp":  # RLTP's header is its fields' sum
            tr["header_bytes"] = pick(rng, 0, 62, 200)
    if kind != "uet":  # only UET recovers a trimmed packet
        sc["network"].pop("trim", None)
    if kind == "datagram":
        if rng.random() < 0.4:
            tr["rate"] = pick(rng, "1Gbps", "10Gbps", "25Gbps")
        if rng.random() < 0.3:
            tr["payload_min"] = "512B"
        tr["ecn_capable"] = rng.random() < 0.8
        return
    if kind == "uet":
        uet(rng, sc, tr)
        return
    roce_like(rng, sc, tr, kind)


def flow_size(rng):
    return pick(rng, *FLOW_SIZES)


def job_ops(rng, ranks, sweep):
    ops = []
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.15:
            ops.append({"type": "compute", "duration": pick(rng, "1us", "10us")})
            continue
        op = {"type": rng.choice(COLLECTIVES), "bytes": pick(rng, *COLLECTIVE_SIZES)}
        if op["type"] == "sendrecv":
            src, dst = rng.sample(range(ranks), 2)
            op.update(src_rank=src, dst_rank=dst)
        if sweep and rng.random() < 0.5:
            op["bytes"] = "$size"
        ops.append(op)
    if all(op["type"] == "compute" for op in ops):
        ops.append({"type": "alltoall", "bytes": "16KiB"})
    return ops


def jobs(rng, shape, sweep):
    """Jobs on disjoint GPUs, each placed by list, block or one GPU of each server."""
    free = list(range(shape.hosts))
    rng.shuffle(free)
    out = []
    for n in range(rng.randint(1, 3)):
        by_server = shape.servers >= 2 and n == 0 and rng.random() < 0.3
        if by_server:
            job = {"name": "srv", "placement": "gpu_of_each_server",
                   "gpu": 0, "count": rng.randint(1, shape.gpus)}
            ranks = shape.servers
            free = []  # these replicas may use every GPU index
        elif n == 0 and rng.random() < 0.2:
            ranks = rng.randint(2, shape.hosts)
            job = {"name": "blk", "placement": "block", "ranks": ranks,
                   "first": rng.randint(0, shape.hosts - ranks)}
            free = []
        else:
            if len(free) < 2:
                break
            ranks = rng.randint(2, min(len(free), 8))
            job = {"name": f"job{n}", "gpus": free[:ranks]}
            free = free[ranks:]
        if rng.random() < 0.2:
            job["iterations"] = 2
        if rng.random() < 0.2:
            job["start"] = pick(rng, "1us", "20us")
        job["ops"] = job_ops(rng, ranks, sweep)
        out.append(job)
        if not free:
            break
    return out


def trace_gpu(rng, wl):
    """Scale-up, iterations and channels of the trace and training workloads."""
    if rng.random() < 0.3:
        wl.setdefault("gpu", {}).update(scale_up_rate=pick(rng, 0, "2400Gbps"),
                                        scale_up_latency=pick(rng, "100ns", "2us"))
    wl.update(iterations=pick(rng, 1, 1, 2), channels=pick(rng, 0, 1, 2),
              ideal_network=rng.random() < 0.1)


def training(rng, wl, shape):
    """A toy model (tiny layers, a short sequence) in a DP/TP/PP(/EP) layout that fits."""
    while True:
        tp, pp, dp = pick(rng, 1, 2, 4), pick(rng, 1, 2), pick(rng, 1, 2, 4)
        if tp * pp * dp <= shape.hosts:
            break
    moe = dp >= 2 and rng.random() < 0.3
    heads = pick(rng, 4, 8)
    wl["model"] = {"layers": pick(rng, 2, 4), "hidden": 64 * heads, "heads": heads,
                   "kv_heads": heads, "ffn": pick(rng, 256, 1024), "vocab": pick(rng, 0, 1000),
                   "seq": pick(rng, 64, 256), "experts": 4 if moe else 0, "top_k": 2 if moe else 0}
    micro = pick(rng, 1, 2)
    wl["parallel"] = {"tp": tp, "pp": pp, "dp": dp, "ep": pick(rng, 1, dp) if moe else 1,
                      "micro_batch": micro, "global_batch": dp * micro * pick(rng, 1, 2, 4)}
    wl["gpu"] = {"peak_tflops": pick(rng, 1, 100), "efficiency": 0.5}
    wl.update(dp_algorithm=pick(rng, "allreduce", "reducescatter_allgather"),
              dp_overlap=rng.random() < 0.7, recompute=rng.random() < 0.2,
              bucket=pick(rng, 0, "64KiB"), optimizer_time=pick(rng, 0, "1us"))
    if shape.servers >= dp * pp and shape.gpus >= tp and rng.random() < 0.3:
        wl["placement"] = "per_server"
    else:
        wl["first"] = rng.randint(0, shape.hosts - tp * pp * dp)
    trace_gpu(rng, wl)


def workload(rng, sc, shape):
    kind = pick(rng, "permutation", "incast", "flows", "jobs", "jobs", "cdf", "training",
                "simai", "chakra")
    if kind == "simai" and shape.hosts < 8 or kind == "chakra" and shape.hosts < 4:
        kind = "jobs"
    wl = sc["workload"] = {"kind": kind}
    if kind == "permutation":
        wl.update(bytes=flow_size(rng))
    elif kind == "incast":
        wl.update(bytes=flow_size(rng), senders=rng.randint(1, shape.hosts - 1),
                  receiver=rng.randrange(shape.hosts))
    elif kind == "flows":
        flows = []
        for _ in range(rng.randint(1, 6)):
            src, dst = rng.sample(range(shape.hosts), 2)
            flows.append({"src": src, "dst": dst, "bytes": flow_size(rng),
                          "start": f"{rng.randint(0, 50)}us"})
        wl["flows"] = flows
    elif kind == "cdf":
        wl.update(cdf=pick(rng, "websearch", "fbhdp", "alistorage", "googlerpc"),
                  interpolation=pick(rng, "linear", "step"), load=pick(rng, 0.1, 0.3, 0.7),
                  duration=pick(rng, "10us", "50us"), pattern=pick(rng, "uniform", "permutation"))
    elif kind == "training":
        training(rng, wl, shape)
    elif kind in ("simai", "chakra"):
        traces = pathlib.Path(__file__).resolve().parent.parent / "examples" / "traces"
        if kind == "simai":
            wl.update(file=str(traces / "simai-example.txt"),
                      first=rng.randint(0, shape.hosts - 8),
                      iteration_barrier=rng.random() < 0.5)
        else:
            wl.update(trace=str(traces / "chakra-example"), first=rng.randint(0, shape.hosts - 4))
        trace_gpu(rng, wl)
    else:
        sweep = rng.random() < 0.15
        if rng.random() < 0.2:
            wl["step_latency"] = pick(rng, "100ns", "2us")
        if rng.random() < 0.2:
            wl["tree_chunk"] = pick(rng, "16KiB", "64KiB")
        wl["jobs"] = jobs(rng, shape, sweep)
        uses_size = any(op.get("bytes") == "$size" for j in wl["jobs"] for op in j["ops"])
        if uses_size:
            sc["sweep"] = {"sizes": ["16KiB", "64KiB"]}
    if kind in ("permutation", "incast") and rng.random() < 0.2:
        wl["start"] = pick(rng, "1us", "10us")


def generate(seed, index):
    """One valid scenario as nested dicts, a function of (seed, index) alone."""
    rng = random.Random(f"fabsim-soak:{seed}:{index}")
    sc = {"name": f"soak-{seed}-{index}",
          "description": "random scenario of tools/soak.py"}
    stop_us = pick(rng, 500, 2000, 5000)
    sc["simulation"] = {"seed": rng.randint(0, 2**31), "stop_time": f"{stop_us}us"}
    shape = topology(rng, sc)
    network(rng, sc)
    routing_and_fabric(rng, sc, shape)
    faults(rng, sc, shape, stop_us)
    security(rng, sc)
    transport(rng, sc)
    workload(rng, sc, shape)
    if rng.random() < 0.15 and "sweep" not in sc:
        sc["sweep"] = {"seeds": [1, 2]}
    out = sc["output"] = {}
    if rng.random() < 0.1:
        out["trace"] = True
        if rng.random() < 0.5:
            out["trace_flows"] = [0, 1]
    if rng.random() < 0.2:
        out.update(sample_interval=pick(rng, "1us", "10us"),
                   sample_ports=pick(rng, "uplinks", "downlinks", "all"))
    if rng.random() < 0.1:
        out["misorder"] = True
    if rng.random() < 0.1:
        out["slowdown"] = True
    return sc


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(v)


def is_table_list(v):
    return isinstance(v, list) and v and all(isinstance(x, dict) for x in v)


def to_toml(table, path=()):
    lines = []
    for key, v in table.items():
        if not isinstance(v, dict) and not is_table_list(v):
            lines.append(f"{key} = {toml_value(v)}")
    for key, v in table.items():
        if isinstance(v, dict):
            lines += ["", "[" + ".".join(path + (key,)) + "]"] + to_toml(v, path + (key,))
    for key, v in table.items():
        if is_table_list(v):
            for item in v:
                lines += ["", "[[" + ".".join(path + (key,)) + "]]"] + to_toml(item, path + (key,))
    return lines


def kinds_of(sc):
    """(family, kind) pairs of one scenario, for the coverage line of the report."""
    out = [("topology", sc["topology"]["kind"]), ("routing", sc["routing"]["policy"]),
           ("fabric", sc["fabric"]["kind"]), ("transport", sc["transport"]["kind"]),
           ("workload", sc["workload"]["kind"]), ("security", sc["security"]["kind"]),
           ("pfc", "on" if sc["network"]["pfc"]["enabled"] else "off"),
           ("loss", "on" if "loss_probability" in sc["network"] else "off"),
           ("sweep", "on" if "sweep" in sc else "off")]
    out += [("fault", ev["action"]) for ev in sc.get("faults", {}).get("events", [])]
    tr = sc["transport"]
    if tr["kind"] != "datagram":
        out.append(("cc", tr.get("cc", "dcqcn" if tr["kind"] == "roce" else "none")))
    if tr["kind"] == "uet":
        out.append(("uet", tr["uet"]["mode"] + ("+credit" if tr["uet"].get("receiver_credit")
                                               else "")))
    if sc["network"].get("trim"):
        out.append(("trim", "on"))
    return out


def family(sc):
    """A short label of the scenario's main kinds, for the report."""
    return "/".join([sc["topology"]["kind"], sc["fabric"]["kind"], sc["transport"]["kind"],
                     sc["workload"]["kind"]])


def run_once(fabsim, scenario, out, timeout):
    """(exit code or None on timeout, wall seconds, stderr tail)."""
    t0 = time.monotonic()
    # A process group of its own, so a timeout kills the run and any sweep threads at once.
    p = subprocess.Popen([fabsim, "run", str(scenario), "--out", str(out)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None, time.monotonic() - t0, ""
    return p.returncode, time.monotonic() - t0, err[-2000:]


def result_files(out):
    """Relative path -> bytes of every file under a result directory (summary.json, flows.csv,
    trace.csv, timeseries.csv, a sweep's tables and cases: none depends on wall-clock time)."""
    found = {}
    if out.is_dir():
        for p in sorted(out.rglob("*")):
            if p.is_file():
                found[str(p.relative_to(out))] = p.read_bytes()
    return found


def summaries(files):
    """(relative path, parsed summary or None, parse error or None) of every summary.json of
    one run (a sweep writes one per case)."""
    for rel, data in files.items():
        if rel.endswith("summary.json"):
            try:
                yield rel, json.loads(data), None
            except ValueError as e:
                yield rel, None, e


def ledger_problems(files):
    """(summaries with a ledger, problems) over every summary.json of one run."""
    with_ledger = 0
    problems = []
    for rel, summary, error in summaries(files):
        if error is not None:
            problems.append(f"{rel}: not JSON ({error})")
            continue
        if not isinstance(summary, dict) or "ledger" not in summary:
            continue
        with_ledger += 1
        ledger = summary["ledger"]
        if not isinstance(ledger, dict) or ledger.get("balanced") is not True:
            brief = json.dumps(ledger)[:400]
            problems.append(f"{rel}: ledger not balanced: {brief}")
    return with_ledger, problems


def reliable(sc):
    """The transport recovers every loss (it has timers): it never goes still unfinished."""
    tr = sc.get("transport", {})
    kind = tr.get("kind", "datagram")
    return kind in ("roce", "rltp") or kind == "uet" and tr.get("uet", {}).get("mode") != "uud"


def stalls(scenario, files):
    """A reliable transport whose run went still with flows unfinished and no sender failed is
    waiting for something nothing will send: a deadlock (summary.json's stalled_at_ps)."""
    try:
        sc = tomllib.loads(pathlib.Path(scenario).read_text())
    except (OSError, ValueError):
        return []
    if not reliable(sc):
        return []
    found = []
    for rel, summary, _ in summaries(files):
        if not isinstance(summary, dict):
            continue  # reported by the ledger check
        if "stalled_at_ps" in summary and summary.get("failed_senders", 0) == 0:
            found.append(("stall", f"{rel}: unfinished and nothing left to happen after "
                                   f"{summary['stalled_at_ps'] / 1e6:.3f} us, no sender failed"))
    return found


def check(fabsim, scenario, work, timeout):
    """Runs a scenario twice; returns (exit code, ledger seen, list of (kind, reason))."""
    runs = []
    for n in (1, 2):
        out = work / f"out{n}"
        code, wall, err = run_once(fabsim, scenario, out, timeout)
        runs.append((code, wall, err, result_files(out)))
        if code is None or code not in (0, 3):
            break
    found = []
    code, wall, err, files = runs[0]
    for code_n, wall_n, err_n, _ in runs:
        if code_n is None:
            found.append(("timeout", f"no exit within {timeout} s"))
        elif code_n == 2:
            found.append(("generator", f"bad input (exit 2): {err_n.strip()}"))
        elif code_n < 0:
            found.append(("crash", f"signal {-code_n}: {err_n.strip()}"))
        elif code_n not in (0, 3):
            found.append(("error", f"exit {code_n}: {err_n.strip()}"))
    if found:
        return code, False, found[:1]
    ledgers, problems = ledger_problems(files)
    found += [("ledger", p) for p in problems]
    for rel, summary, _ in summaries(files):
        if code != 0 or not isinstance(summary, dict):
            continue  # a summary that is not JSON is reported by the ledger check
        if summary.get("all_flows_done") is False:
            found.append(("exit code", f"exit 0 but {rel} says not all flows are done"))
    found += stalls(scenario, files)
    code2, _, _, files2 = runs[1]
    if code2 != code:
        found.append(("determinism", f"exit {code} then {code2}"))
    if not files:
        found.append(("error", "no summary.json written"))
    for rel in sorted(set(files) | set(files2)):
        if files.get(rel) != files2.get(rel):
            found.append(("determinism", f"{rel} differs between the two runs"))
            break
    return code, ledgers > 0, found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fabsim", required=True, help="the fabsim binary")
    ap.add_argument("--count", type=int, required=True, help="scenarios to generate and run")
    ap.add_argument("--seed", type=int, required=True, help="generator seed")
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="wall-time guard per run in seconds (default 30)")
    ap.add_argument("--findings", default="soak-findings",
                    help="where failing scenarios are saved (default ./soak-findings)")
    ap.add_argument("--emit", help="write the scenarios to this directory and run nothing")
    args = ap.parse_args()
    if args.count < 1:
        sys.exit("soak.py: --count must be at least 1")

    if args.emit:
        emit = pathlib.Path(args.emit)
        emit.mkdir(parents=True, exist_ok=True)
        for i in range(args.count):
            sc = generate(args.seed, i)
            (emit / f"{sc['name']}.toml").write_text("\n".join(to_toml(sc)) + "\n")
        print(f"soak: wrote {args.count} scenarios to {emit}/")
        return 0

    fabsim = str(pathlib.Path(args.fabsim).resolve())
    findings_dir = pathlib.Path(args.findings)
    t0 = time.monotonic()
    codes = {0: 0, 3: 0}
    with_ledger = 0
    findings = []
    kinds_seen = set()
    coverage = {}
    with tempfile.TemporaryDirectory(prefix="fabsim-soak-") as tmp:
        for i in range(args.count):
            sc = generate(args.seed, i)
            kinds_seen.add(family(sc))
            for pair in kinds_of(sc):
                coverage[pair] = coverage.get(pair, 0) + 1
            work = pathlib.Path(tmp) / str(i)
            work.mkdir()
            scenario = work / f"{sc['name']}.toml"
            scenario.write_text("\n".join(to_toml(sc)) + "\n")
            code, ledger, found = check(fabsim, scenario, work, args.timeout)
            if code in codes and not any(k == "generator" for k, _ in found):
                codes[code] += 1
            with_ledger += 1 if ledger else 0
            for kind, reason in found:
                findings_dir.mkdir(parents=True, exist_ok=True)
                saved = findings_dir / scenario.name
                shutil.copy(scenario, saved)
                (findings_dir / f"{sc['name']}.txt").write_text(f"{kind}: {reason}\n")
                findings.append((kind, sc["name"]))
                print(f"FINDING {kind}: {sc['name']} ({family(sc)}): {reason}")
                print(f"  reproduce: {args.fabsim} run {saved} --out /tmp/{sc['name']}")
            shutil.rmtree(work)
            if (i + 1) % 100 == 0:
                print(f"soak: {i + 1}/{args.count} scenarios, {len(findings)} findings, "
                      f"{time.monotonic() - t0:.0f} s", flush=True)
    wall = time.monotonic() - t0
    generator_bugs = sum(1 for k, _ in findings if k == "generator")
    families = {}
    for (fam, kind), n in sorted(coverage.items()):
        families.setdefault(fam, []).append(f"{kind} {n}")
    print("soak: kinds: " + "; ".join(f"{fam}: {', '.join(v)}" for fam, v in families.items()))
    print(f"soak: seed {args.seed}: {args.count} scenarios ({len(kinds_seen)} combinations of "
          f"topology/fabric/transport/workload), each run twice in {wall:.1f} s: {codes[0]} "
          f"complete (exit 0), {codes[3]} incomplete (exit 3); ledger checked in {with_ledger} "
          f"scenarios (absent from the summaries of the other {args.count - with_ledger}); "
          f"{len(findings) - generator_bugs} findings, {generator_bugs} generator bugs")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
