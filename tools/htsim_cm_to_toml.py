#!/usr/bin/python3
"""Converts an htsim connection matrix ("src->dst id k start t size b" lines) into a fabsim
scenario on the 1024-host leaf-spine used in docs/PERFORMANCE.md, so both simulators run the
same flows. Usage: htsim_cm_to_toml.py MATRIX NAME BYTES_PER_FLOW > scenario.toml

BYTES_PER_FLOW overrides the matrix's sizes: htsim sends whole MTU packets (2,000,000 B becomes
489 x 4096 B), so pass 2002944 to compare FCTs. Use it with tools/htsim_like.args."""
import sys


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    matrix, name, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    flows = []
    with open(matrix, encoding="utf-8") as f:
        for line in f:
            if "->" not in line:
                continue
            src, rest = line.split("->", 1)
            flows.append((int(src), int(rest.split()[0])))
    print(f'name = "{name}"')
    print("""[topology]
kind = "leaf_spine"
servers = 1024
gpus_per_server = 1
servers_per_leaf = 32
spines = 32
nic_rate = "100Gbps"
uplink_rate = "100Gbps"
host_link_delay = "1us"
fabric_link_delay = "1us"
[transport]
kind = "roce"
payload = "4KiB"
[workload]
kind = "flows\"""")
    for src, dst in flows:
        print(f"[[workload.flows]]\nsrc = {src}\ndst = {dst}\nbytes = {size}")


if __name__ == "__main__":
    main()
