#!/usr/bin/python3
"""The soak's checks can fail (tools/soak.py): a stand-in for fabsim that misbehaves in one way
at a time must be reported as that finding, and one that behaves must pass, with the ledger check
counted only where summary.json has a "ledger".

  soak_selftest.py SOAK_PY
"""
import pathlib
import subprocess
import sys
import tempfile

# A fake `fabsim run FILE --out DIR`; MODE (from its own file name) says how it misbehaves.
FAKE = r'''#!/usr/bin/python3
import json, os, pathlib, random, sys, time
mode = pathlib.Path(sys.argv[0]).name.split("-", 1)[1]
out = pathlib.Path(sys.argv[sys.argv.index("--out") + 1])
out.mkdir(parents=True, exist_ok=True)
summary = {"name": "x", "all_flows_done": mode not in ("unfinished", "stalled", "senderfailed")}
if mode in ("stalled", "senderfailed"):
    summary.update(stalled_at_ps=5000000, failed_senders=int(mode == "senderfailed"))
if mode != "noledger":
    summary["ledger"] = {"balanced": mode != "unbalanced", "classes": []}
if mode == "nondeterministic":
    summary["end_time_ps"] = random.random()
(out / "summary.json").write_text(json.dumps(summary))
(out / "flows.csv").write_text("flow\n0\n")
if mode == "hang":
    time.sleep(30)
if mode == "abort":
    os.abort()
sys.exit({"internal": 1, "badinput": 2, "incomplete": 3, "stalled": 3,
          "senderfailed": 3}.get(mode, 0))
'''

# mode -> (soak's expected exit code, text its output must hold)
CASES = {
    "good": (0, "ledger checked in 2 scenarios"),
    "noledger": (0, "ledger checked in 0 scenarios"),
    "incomplete": (0, "2 incomplete (exit 3)"),
    "unbalanced": (1, "FINDING ledger"),
    "nondeterministic": (1, "FINDING determinism"),
    "internal": (1, "FINDING error"),
    "abort": (1, "FINDING crash"),
    "hang": (1, "FINDING timeout"),
    "badinput": (1, "FINDING generator"),
    "unfinished": (1, "FINDING exit code"),
    # seed 1's two scenarios run RoCE and UET ROD: reliable, so going still is a deadlock
    # unless a sender gave up
    "stalled": (1, "FINDING stall"),
    "senderfailed": (0, "2 incomplete (exit 3)"),
}


def main():
    soak = sys.argv[1]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for mode, (want_code, want_text) in CASES.items():
            fake = pathlib.Path(tmp) / f"fabsim-{mode}"
            fake.write_text(FAKE)
            fake.chmod(0o755)
            p = subprocess.run([sys.executable, soak, "--fabsim", str(fake), "--count", "2",
                                "--seed", "1", "--timeout", "2", "--findings",
                                str(pathlib.Path(tmp) / f"findings-{mode}")],
                               capture_output=True, text=True, timeout=120)
            if p.returncode != want_code or want_text not in p.stdout:
                failed += 1
                print(f"FAIL {mode}: exit {p.returncode} (expected {want_code}), "
                      f"expected '{want_text}' in:\n{p.stdout}{p.stderr}")
    print(f"soak self-test: {len(CASES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
