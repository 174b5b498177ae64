#!/usr/bin/python3
"""Writes the two small traces shipped under examples/traces/ (issue 19 item 4; docs/WORKLOADS.md
"Trace workloads"): a SimAI/AICB workload file (REFERENCE.md §8.5) and a 4-rank Chakra execution
trace (REFERENCE.md §8.6), both made up here to exercise every mapping fabsim has, at sizes that
simulate in seconds. tests/test_traces.cpp asserts the task graph each one becomes, and the
`traces_generated` test regenerates them and compares byte for byte.

  make_traces.py [--out DIR]     (default: examples/traces/ of this checkout)

The Chakra files are written with Debian's python3-protobuf from workload/trace/et_def.proto,
compiled here by protoc (protobuf-compiler) into a temporary module.
"""
import argparse
import importlib
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROTO = ROOT / "workload" / "trace" / "et_def.proto"

# SimAI: 8 GPUs, TP 2 and EP 2 (so DP 4 and DP_EP 2); times in ns, sizes in bytes. The embedding's
# forward AllReduce (2,048 B) is raised to 4,096 B by SimAI's FWD_IN_BCKWD walk; the MoE line uses
# the EP and DP_EP groups. AICB's tab-separated layout and its update time of 100 ns.
SIMAI_HEADER = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 2 pp: 1 vpp: 4 "
                "ga: 1 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0")
SIMAI_LINES = [
    ("embedding", 20000, "ALLREDUCE", 2048, 20000, "NONE", 0, 10000, "ALLREDUCE", 1048576),
    ("attention", 50000, "ALLREDUCE", 262144, 50000, "ALLREDUCE", 262144, 40000, "REDUCESCATTER",
     524288),
    ("moe", 60000, "ALLTOALL_EP", 131072, 60000, "ALLTOALL_EP", 131072, 50000, "ALLREDUCE_DP_EP",
     524288),
    ("lm_head", 30000, "NONE", 0, 30000, "NONE", 0, 20000, "ALLGATHER", 262144),
]


def simai_text():
    rows = [SIMAI_HEADER, str(len(SIMAI_LINES))]
    for name, fc, ft, fb, ic, it, ib, wc, wt, wb in SIMAI_LINES:
        fields = [name, -1, fc, ft, fb, ic, it, ib, wc, wt, wb, 100]
        rows.append("\t".join(str(f) for f in fields))
    return "\n".join(rows) + "\n"


def load_schema(tmp):
    subprocess.run(["protoc", f"-I{PROTO.parent}", f"--python_out={tmp}", str(PROTO)], check=True)
    sys.path.insert(0, tmp)
    return importlib.import_module("et_def_pb2")


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def chakra_ranks(pb):
    """Rank -> its Node messages: a 2-stage pipeline (ranks 0, 1 -> 2, 3) with data parallelism 2
    within each stage (process groups "1" = {0, 1}, "2" = {2, 3}, defined by a METADATA node in
    ASTRA-sim's form), then an AllGather and an AllToAll over all ranks (process group "" and
    "0", the default communicator)."""
    groups = [{"pg_name": "0", "ranks": []}, {"pg_name": "1", "ranks": [0, 1]},
              {"pg_name": "2", "ranks": [2, 3]}]
    KiB = 1024

    def attr(name, **value):
        return pb.AttributeProto(name=name, **value)

    def node(i, name, kind, deps=(), us=0, attrs=(), ctrl=()):
        n = pb.Node(id=i, name=name, type=kind, duration_micros=us)
        n.data_deps.extend(deps)
        n.ctrl_deps.extend(ctrl)
        n.attr.extend(attrs)
        return n

    def coll(i, name, ctype, size, deps, pg=None):
        attrs = [attr("comm_type", int64_val=ctype), attr("comm_size", int64_val=size)]
        if pg is not None:
            attrs.append(attr("pg_name", string_val=pg))
        return node(i, name, pb.COMM_COLL_NODE, deps, attrs=attrs)

    def p2p(i, name, kind, src, dst, size, tag, deps):
        attrs = [attr("comm_src", int32_val=src), attr("comm_dst", int32_val=dst),
                 attr("comm_size", int64_val=size), attr("comm_tag", int32_val=tag)]
        return node(i, name, kind, deps, attrs=attrs)

    ranks = {}
    for r in range(4):
        meta = node(0, "process_group:init", pb.METADATA_NODE)
        meta.inputs.values = "['" + json.dumps(groups) + "']"
        stage0 = r < 2
        peer = r + 2 if stage0 else r - 2
        dp = "1" if stage0 else "2"
        if stage0:
            body = [
                node(1, "forward", pb.COMP_NODE, [0], us=40, ctrl=[0]),
                p2p(2, "send_activation", pb.COMM_SEND_NODE, r, peer, 256 * KiB, 1, [1]),
                p2p(3, "recv_gradient", pb.COMM_RECV_NODE, peer, r, 256 * KiB, 2, [1]),
                node(4, "backward", pb.COMP_NODE, [3], us=80),
            ]
        else:
            body = [
                p2p(1, "recv_activation", pb.COMM_RECV_NODE, peer, r, 256 * KiB, 1, [0]),
                node(2, "forward", pb.COMP_NODE, [1], us=40),
                node(3, "backward", pb.COMP_NODE, [2], us=80),
                p2p(4, "send_gradient", pb.COMM_SEND_NODE, r, peer, 256 * KiB, 2, [3]),
            ]
        last = 4 if stage0 else 3  # the backward
        tail = [
            coll(5, "dp_allreduce", pb.ALL_REDUCE, 1024 * KiB, [last], pg=dp),
            coll(6, "allgather", pb.ALL_GATHER, 64 * KiB, [5], pg=""),
            node(7, "optimizer", pb.COMP_NODE, [6], us=10),
            coll(8, "alltoall", pb.ALL_TO_ALL, 128 * KiB, [7], pg="0"),
        ]
        ranks[r] = [meta] + body + tail
    return ranks


def write(out):
    out.mkdir(parents=True, exist_ok=True)
    (out / "simai-example.txt").write_text(simai_text())
    with tempfile.TemporaryDirectory() as tmp:
        pb = load_schema(tmp)
        for r, nodes in chakra_ranks(pb).items():
            data = bytearray()
            for msg in [pb.GlobalMetadata(version="0.0.4")] + nodes:
                body = msg.SerializeToString(deterministic=True)
                data += varint(len(body)) + body
            (out / f"chakra-example.{r}.et").write_bytes(bytes(data))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "examples" / "traces"))
    write(pathlib.Path(ap.parse_args().out))


if __name__ == "__main__":
    main()
