#!/usr/bin/env bash
# Runs the benchmarks recorded in docs/PERFORMANCE.md. Usage: bench/run.sh [build-dir]
# Each scenario runs in its own process (peak memory is per process). The callgrind count
# (instructions per delivered packet) is stable on a noisy machine; wall figures are not.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
bench="$build/bench/fabsim_bench"
echo "== scheduler micro-benchmark"
"$bench" --benchmark_min_time=0.2
echo "== scenarios"
for s in bench/scenarios/*.toml; do "$bench" scenario "$s"; done
# Instructions per delivered data packet of one scenario, counted by callgrind.
count() {
  local out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$bench" scenario "$1" \
    > "$out.json" 2> "$out.err"
  ir=$(grep -oP 'Collected : \K[0-9]+' "$out.err" || grep -oP 'refs:\s+\K[0-9,]+' "$out.err" | tr -d ,)
  pk=$(grep -oP '"data_packets": \K[0-9]+' "$out.json")
  echo "$(basename "$1" .toml): instructions: $ir  data packets: $pk  instructions/packet: $((ir / pk))"
  rm -f "$out" "$out.json" "$out.err"
}
echo "== callgrind: instructions per delivered data packet (permutation-128)"
count bench/scenarios/permutation-128.toml
echo "== callgrind: RoCE at 1 % loss per link, go-back-N and IRN (issue 15)"
count bench/scenarios/permutation-128-lossy-gbn.toml
count bench/scenarios/permutation-128-lossy-irn.toml
echo "== callgrind: Ultra Ethernet RUD + NSCC + trimming (issue 17)"
count bench/scenarios/permutation-128-uet.toml
