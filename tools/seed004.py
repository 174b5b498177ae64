#!/usr/bin/python3
"""Seed 004 Fig. 11 reproduction (docs/VALIDATION.md "Seed 004"): runs the three seed004-*
bandwidth scenarios at each loss rate and prints, per transport and loss, the median and mean
1 MB transfer time, the goodput over all transfers (bytes / sum of transfer times), the
retransmissions and the timeouts.

  tools/seed004.py --fabsim build/release/apps/fabsim/fabsim [--losses 0,0.001,0.01,0.1]
"""
import argparse
import csv
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCENARIOS = [("RoCE go-back-N", "seed004-roce-gbn"), ("RoCE IRN", "seed004-roce-irn"),
             ("RLTP", "seed004-rltp")]


def run(fabsim, scenario, loss, out):
    cmd = [fabsim, "run", str(ROOT / "scenarios" / f"{scenario}.toml"), "--set",
           f"network.loss.probability={loss}", "--out", str(out)]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else None
    return done.returncode, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabsim", required=True)
    ap.add_argument("--losses", default="0,0.001,0.01,0.1")
    args = ap.parse_args()
    losses = [float(x) for x in args.losses.split(",")]
    print("| transport | loss | median transfer (us) | mean transfer (us) | goodput (Gb/s) "
          "| retransmissions / transfer | timeouts | completed |")
    print("|---|---|---|---|---|---|---|---|")
    worst = 0
    with tempfile.TemporaryDirectory() as tmp:
        for label, scenario in SCENARIOS:
            for loss in losses:
                out = pathlib.Path(tmp) / f"{scenario}-{loss}"
                rc, summary = run(args.fabsim, scenario, loss, out)
                worst = max(worst, rc)
                rows = list(csv.DictReader((out / "flows.csv").open())) if summary else []
                done = [r for r in rows if int(r["end_ps"]) > 0 and int(r["delivered"]) == int(r["bytes"])]
                fct = [int(r["fct_ps"]) / 1e6 for r in done]
                retx = sum(int(r["retransmissions"]) for r in rows)
                byts = sum(int(r["bytes"]) for r in done)
                gp = byts * 8 / (sum(fct) * 1e-6) / 1e9 if fct else 0.0
                t = summary["transport"] if summary else {}
                print(f"| {label} | {loss * 100:g} % | "
                      f"{statistics.median(fct) if fct else float('nan'):.1f} | "
                      f"{statistics.mean(fct) if fct else float('nan'):.1f} | {gp:.2f} | "
                      f"{retx / max(len(rows), 1):.1f} | {t.get('timeouts', '?')} | "
                      f"{len(done)}/{len(rows)}{'' if rc == 0 else f' (exit {rc})'} |")
    return 0 if worst in (0, 3) else worst


if __name__ == "__main__":
    sys.exit(main())
