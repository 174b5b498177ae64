#!/usr/bin/python3
"""Paired whole-process timing of two commands: the ratios quoted in docs/PERFORMANCE.md.

Usage:
  bench/paired.py [-n PAIRS] [--cpu N] [--warmup W] --base 'CMD_B' -- CMD_A [ARG ...]
  bench/paired.py [-n PAIRS] [--cpu N] --aa -- CMD_A [ARG ...]

A and B run in turn (A B A B ...), each as its own process pinned to one processor (`taskset
-c N`, default 1), their output thrown away. Each run's wall time (a monotonic clock around
start and reap), CPU time (user + system from the kernel's accounting of the child) and peak
RSS are recorded, and the ratio A/B is taken pair by pair, so that a machine whose speed
drifts during the series (a shared host) moves both sides of a pair alike. Quote the MEDIAN of
the pair ratios with the number of pairs; min and max show the spread.

--aa times A against itself: the spread of that ratio around 1 is the noise floor, the
smallest difference the same number of pairs can show on this machine.

Exits non-zero if any run of either command fails (a failed run is not a timing).
"""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time


# A child forked from this interpreter starts with its resident size as its peak, so the peak
# is read by /usr/bin/time (Debian package `time`), whose own footprint is about 1 MiB.
TIME = "/usr/bin/time"


def run_once(cmd, cpu, peak_file):
    """One run of `cmd` pinned to `cpu`: (wall s, cpu s, peak RSS MiB or None)."""
    argv = ["taskset", "-c", str(cpu)] + cmd if cpu is not None else list(cmd)
    if peak_file:
        argv = [TIME, "-f", "%M", "-o", peak_file] + argv
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"paired.py: '{shlex.join(cmd)}' exited with {code}")
    peak = None
    if peak_file:
        with open(peak_file, encoding="utf-8") as f:
            peak = int(f.read().split()[-1]) / 1024.0
    return wall, usage.ru_utime + usage.ru_stime, peak


def spread(values):
    return f"{min(values):9.3f} {statistics.median(values):9.3f} {max(values):9.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=15, help="pairs (default 15)")
    ap.add_argument("--warmup", type=int, default=1, help="unrecorded pairs first (default 1)")
    ap.add_argument("--cpu", type=int, default=1, help="processor to pin to (default 1; -1: none)")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--base", help="command B (the baseline), one string split as a shell does")
    group.add_argument("--aa", action="store_true", help="time A against itself (noise floor)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command A and its arguments")
    args = ap.parse_args()
    cmd_a = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd_a:
        ap.error("command A is missing (after --)")
    if args.n < 1:
        ap.error("-n must be at least 1")
    cmd_b = cmd_a if args.aa else shlex.split(args.base)
    cpu = None if args.cpu < 0 else args.cpu

    peak_file = None
    if os.access(TIME, os.X_OK):
        fd, peak_file = tempfile.mkstemp(prefix="paired-")
        os.close(fd)
    try:
        for _ in range(args.warmup):
            run_once(cmd_a, cpu, peak_file)
            run_once(cmd_b, cpu, peak_file)
        a, b = [], []
        for _ in range(args.n):
            a.append(run_once(cmd_a, cpu, peak_file))
            b.append(run_once(cmd_b, cpu, peak_file))
    finally:
        if peak_file:
            os.unlink(peak_file)

    print(f"pairs {args.n}, pinned to {'none' if cpu is None else f'cpu {cpu}'}")
    print(f"A: {shlex.join(cmd_a)}")
    print(f"B: {shlex.join(cmd_b)}{' (A against itself)' if args.aa else ''}")
    print(f"{'':14s} {'min':>9s} {'median':>9s} {'max':>9s}")
    for label, k in (("wall s", 0), ("cpu s", 1), ("peak MiB", 2)):
        if k == 2 and peak_file is None:
            print(f"peak memory not measured: {TIME} is missing (apt-get install time)")
            continue
        print(f"A {label:12s} {spread([r[k] for r in a])}")
        print(f"B {label:12s} {spread([r[k] for r in b])}")
    for label, k in (("wall", 0), ("cpu", 1)):
        ratios = [x[k] / y[k] for x, y in zip(a, b) if y[k] > 0]
        if ratios:
            print(f"A/B {label:10s} {spread(ratios)}")


if __name__ == "__main__":
    main()
