#!/usr/bin/python3
"""fabsim plots: JCT vs size, CDF of flow completion times, queue depth and link utilisation,
FCT slowdown vs flow size.

Usage: plot.py OUT_DIR RESULT_DIR [RESULT_DIR ...]
Writes PNG and SVG files into OUT_DIR and prints their names. Each RESULT_DIR is a directory
written by `fabsim run --out` or one scenario's directory of `fabsim compare --out`: a sweep
(sweep.csv, cases/*/flows.csv, cases/*/slowdown.csv) or a single run (summary.json, flows.csv,
optional timeseries.csv and slowdown.csv). Run with Debian's /usr/bin/python3 and
python3-matplotlib."""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def label_of(d):
    return os.path.basename(os.path.normpath(d))


def save(fig, out_dir, stem, written):
    fig.tight_layout()
    for ext in ("png", "svg"):
        path = os.path.join(out_dir, f"{stem}.{ext}")
        fig.savefig(path, dpi=130)
        written.append(path)
    plt.close(fig)


def human_size(b):
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return f"{b // k} {unit}"
    return f"{b} B"


def plot_jct(dirs, out_dir, written):
    series = []
    for d in dirs:
        path = os.path.join(d, "sweep.csv")
        if not os.path.exists(path):
            continue
        rows = read_csv(path)
        for coll in sorted({r["collective"] for r in rows}):
            pts = sorted((int(r["size"]), float(r["max_jct_us_median"]), float(r["max_jct_us_min"]),
                          float(r["max_jct_us_max"])) for r in rows if r["collective"] == coll)
            pts = [p for p in pts if p[0] > 0]
            if pts:
                series.append((f"{label_of(d)} {coll}".strip(), pts))
    if not series:
        return
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for name, pts in series:
        x = [p[0] / (1 << 20) for p in pts]
        line, = ax.plot(x, [p[1] / 1000 for p in pts], marker="o", label=name)
        ax.fill_between(x, [p[2] / 1000 for p in pts], [p[3] / 1000 for p in pts],
                        color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("collective size S per rank (MiB)")
    ax.set_ylabel("JCT of the slowest job (ms)")
    ax.set_title("Job completion time vs size (median over seeds, band = min to max)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, out_dir, "jct_vs_size", written)


def flow_files(d):
    files = []
    if os.path.exists(os.path.join(d, "flows.csv")):
        files.append(os.path.join(d, "flows.csv"))
    cases = os.path.join(d, "cases")
    if os.path.isdir(cases):
        for c in sorted(os.listdir(cases)):
            p = os.path.join(cases, c, "flows.csv")
            if os.path.exists(p):
                files.append(p)
    return files


def plot_fct_cdf(dirs, out_dir, written):
    curves = []
    for d in dirs:
        files = flow_files(d)
        if not files:
            continue
        if len(files) > 1:
            # A sweep: the largest size's cases (all seeds), where the fabric matters most.
            sizes = {}
            for f in files:
                case = os.path.basename(os.path.dirname(f))
                parts = case.split("-")
                size = int(parts[-2]) if len(parts) >= 3 and parts[-2].isdigit() else 0
                sizes.setdefault(size, []).append(f)
            top = max(sizes)
            files = sizes[top]
            suffix = f" ({human_size(top)})" if top else ""
        else:
            suffix = ""
        by_coll = {}
        for f in files:
            case = os.path.basename(os.path.dirname(f)) if len(files) > 1 or f.count("cases") else ""
            coll = case.split("-")[0] if case else ""
            for r in read_csv(f):
                v = int(r["fct_ps"])
                if v >= 0:
                    by_coll.setdefault(coll, []).append(v / 1e6)
        for coll, v in sorted(by_coll.items()):
            v.sort()
            curves.append((f"{label_of(d)} {coll}{suffix}".strip(), v))
    if not curves:
        return
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for name, v in curves:
        n = len(v)
        ax.step(v, [(i + 1) / n for i in range(n)], where="post", label=f"{name} ({n} flows)")
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (us)")
    ax.set_ylabel("fraction of flows")
    ax.set_title("CDF of flow completion times")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, out_dir, "fct_cdf", written)


def plot_timeseries(dirs, out_dir, written):
    for d in dirs:
        path = os.path.join(d, "timeseries.csv")
        if not os.path.exists(path):
            continue
        rows = read_csv(path)
        ports = {}
        for r in rows:
            key = f"{r['node']}:{r['port']}"
            ports.setdefault(key, []).append((int(r["time_ps"]) / 1e6, int(r["queue_bytes"]),
                                              float(r["utilization"])))
        busiest = sorted(ports, key=lambda k: -max(p[1] for p in ports[k]))[:8]
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
        for k in busiest:
            pts = ports[k]
            ax1.plot([p[0] for p in pts], [p[1] / 1000 for p in pts], label=k, linewidth=1)
        times = sorted({p[0] for v in ports.values() for p in v})
        mean_util = []
        for t in times:
            vals = [p[2] for v in ports.values() for p in v if p[0] == t]
            mean_util.append(100 * sum(vals) / len(vals))
        ax2.plot(times, mean_util, color="black", label="mean over sampled ports")
        for k in busiest[:4]:
            pts = ports[k]
            ax2.plot([p[0] for p in pts], [100 * p[2] for p in pts], linewidth=0.8, alpha=0.6, label=k)
        ax1.set_ylabel("queue depth (KB)")
        ax1.set_title(f"{label_of(d)}: the 8 deepest sampled queues")
        ax1.legend(fontsize=7, ncol=2)
        ax1.grid(True, alpha=0.3)
        ax2.set_ylabel("link utilisation (%)")
        ax2.set_xlabel("simulated time (us)")
        ax2.set_ylim(0, 105)
        ax2.legend(fontsize=7, ncol=2)
        ax2.grid(True, alpha=0.3)
        save(fig, out_dir, f"timeseries_{label_of(d)}", written)


def slowdown_runs(d):
    """The run directories under d that hold a slowdown.csv: d itself, or a sweep's cases."""
    runs = [d] if os.path.exists(os.path.join(d, "slowdown.csv")) else []
    cases = os.path.join(d, "cases")
    if os.path.isdir(cases):
        for c in sorted(os.listdir(cases)):
            if os.path.exists(os.path.join(cases, c, "slowdown.csv")):
                runs.append(os.path.join(cases, c))
    return runs


def run_label(run, d, several):
    """scenario name / transport.cc (or the transport kind without one), from summary.json."""
    name, cc = label_of(d), ""
    try:
        with open(os.path.join(run, "summary.json"), encoding="utf-8") as f:
            summary = json.load(f)
        name = summary.get("name", name)
        transport = summary.get("scenario", {}).get("transport", {})
        cc = transport.get("cc") or transport.get("kind", "")
    except (OSError, ValueError):
        pass
    label = f"{name} / {cc}" if cc else name
    return f"{label} ({label_of(run)})" if several else label


def plot_slowdown(dirs, out_dir, written):
    """FCT slowdown (p50 and p99) against flow size, one line per run, as the HPCC paper draws it:
    x = each bucket's largest flow, both axes logarithmic."""
    lines = []
    for d in dirs:
        runs = slowdown_runs(d)
        for run in runs:
            rows = read_csv(os.path.join(run, "slowdown.csv"))
            if rows:
                lines.append([run_label(run, d, len(runs) > 1), d, rows])
    if not lines:
        return
    labels = [l[0] for l in lines]
    for l in lines:
        if labels.count(l[0]) > 1:
            l[0] = f"{l[0]} [{label_of(l[1])}]"
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharex=True)
    top = 2.0
    for label, _, rows in lines:
        x = [int(r["max_bytes"]) for r in rows]
        for ax, col in zip(axes, ("p50", "p99")):
            y = [float(r[col]) for r in rows]
            top = max(top, 1.2 * max(y))
            ax.plot(x, y, marker="o", markersize=3, label=label)
    for ax, col in zip(axes, ("p50", "p99")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(0.9, top)
        ax.set_xlabel("flow size (bytes; the largest of each bucket)")
        ax.set_ylabel(f"{col} FCT slowdown")
        ax.set_title(f"{col} slowdown (FCT / ideal FCT, clamped at 1)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    save(fig, out_dir, "slowdown", written)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out_dir, dirs = sys.argv[1], sys.argv[2:]
    for d in dirs:
        if not os.path.isdir(d):
            sys.exit(f"fabsim plot: {d}: not a directory")
    os.makedirs(out_dir, exist_ok=True)
    written = []
    plot_jct(dirs, out_dir, written)
    plot_fct_cdf(dirs, out_dir, written)
    plot_timeseries(dirs, out_dir, written)
    plot_slowdown(dirs, out_dir, written)
    if not written:
        sys.exit("fabsim plot: no sweep.csv, flows.csv, timeseries.csv or slowdown.csv in "
                 + ", ".join(dirs))
    for w in written:
        print(w)


if __name__ == "__main__":
    main()
