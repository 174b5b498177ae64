#!/usr/bin/python3
"""Golden outputs (issue 13 item 7; STYLE.md 28): reruns every case of cases.txt and compares each
run's summary.json and flows.csv with the recorded copies under tests/golden/<case>/.

Exact comparison of every figure. One part of summary.json is left out: the echo of the effective
scenario ("scenario": it gains keys when kinds gain parameters, which moves no figure). flows.csv,
and a sweep's sweep.csv and cases.csv (no wall-clock column), are compared byte for byte.

  golden.py --fabsim PATH            compare (exit 1 and a diff on the first mismatches)
  golden.py --fabsim PATH --update   rewrite the recorded copies (a deliberate, reviewed step)
"""
import argparse
import difflib
import json
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
IGNORED_KEYS = ("scenario",)


def cases():
    for line in (HERE / "cases.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        words = shlex.split(line)
        yield words[0], words[1], words[2:]


def normalised_summary(path):
    data = json.loads(path.read_text())
    for key in IGNORED_KEYS:
        data.pop(key, None)
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def outputs(run_dir):
    """Relative path -> text of every summary.json (normalised) and flows.csv of one run."""
    found = {}
    for p in sorted(run_dir.rglob("*")):
        rel = str(p.relative_to(run_dir))
        if p.name == "summary.json":
            found[rel] = normalised_summary(p)
        elif p.name in ("flows.csv", "sweep.csv", "cases.csv"):
            found[rel] = p.read_text()
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabsim", required=True)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--only", help="run only this case")
    args = ap.parse_args()
    failures = 0
    total = 0
    with tempfile.TemporaryDirectory(prefix="fabsim-golden-") as tmp:
        for name, scenario, extra in cases():
            if args.only and name != args.only:
                continue
            total += 1
            out = pathlib.Path(tmp) / name
            cmd = [args.fabsim, "run", str(ROOT / scenario), *extra, "--threads", "1", "--out", str(out)]
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                print(f"golden {name}: fabsim exited {res.returncode}\n{res.stderr}", file=sys.stderr)
                failures += 1
                continue
            got = outputs(out)
            ref_dir = HERE / name
            if args.update:
                if ref_dir.exists():
                    shutil.rmtree(ref_dir)
                for rel, text in got.items():
                    dst = ref_dir / rel
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    dst.write_text(text)
                print(f"golden {name}: recorded {len(got)} files")
                continue
            want = {}
            if ref_dir.exists():
                for p in sorted(ref_dir.rglob("*")):
                    if p.is_file():
                        want[str(p.relative_to(ref_dir))] = p.read_text()
            if set(want) != set(got):
                print(f"golden {name}: files differ: missing {sorted(set(want) - set(got))}, "
                      f"unexpected {sorted(set(got) - set(want))}", file=sys.stderr)
                failures += 1
                continue
            bad = [rel for rel in want if want[rel] != got[rel]]
            if bad:
                failures += 1
                rel = bad[0]
                diff = difflib.unified_diff(want[rel].splitlines(), got[rel].splitlines(),
                                            f"recorded/{name}/{rel}", f"now/{name}/{rel}", lineterm="", n=1)
                print(f"golden {name}: {len(bad)} file(s) differ, first {rel}:", file=sys.stderr)
                print("\n".join(list(diff)[:40]), file=sys.stderr)
            else:
                print(f"golden {name}: {len(want)} files identical")
    if total == 0:
        print("golden: no case ran", file=sys.stderr)
        return 1
    print(f"golden: {total - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
