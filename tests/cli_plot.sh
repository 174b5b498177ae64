#!/usr/bin/env bash
# `fabsim plot` draws PNG and SVG from a sweep and from a run with a time series and a
# slowdown report.
# Usage: cli_plot.sh FABSIM_BINARY SOURCE_DIR
set -u
fabsim="$1"
src="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$fabsim" run "$src/scenarios/seed002-roce-2to1.toml" --set 'sweep.sizes=["1MiB","2MiB"]' \
  --set 'sweep.seeds=[1,2]' --out "$tmp/sweep" > /dev/null 2>&1 || { echo "FAIL sweep run"; exit 1; }
"$fabsim" run "$src/scenarios/quickstart.toml" --set output.sample_interval=50us \
  --set output.slowdown=true --out "$tmp/ts" > /dev/null 2>&1 || { echo "FAIL quickstart run"; exit 1; }
"$fabsim" plot "$tmp/sweep" "$tmp/ts" --out "$tmp/plots" > "$tmp/plot.out" 2>&1 || { echo "FAIL plot:"; cat "$tmp/plot.out"; exit 1; }
for f in jct_vs_size fct_cdf timeseries_ts slowdown; do
  for ext in png svg; do
    if [ ! -s "$tmp/plots/$f.$ext" ]; then echo "FAIL missing $f.$ext"; fail=$((fail + 1)); fi
  done
done
# The JCT figure has one line per collective: the SVG names both.
grep -q "alltoall" "$tmp/plots/jct_vs_size.svg" || { echo "FAIL legend lacks alltoall"; fail=$((fail + 1)); }
# The slowdown figure labels its line "scenario name / transport.cc".
grep -q "quickstart / dcqcn" "$tmp/plots/slowdown.svg" || { echo "FAIL slowdown legend"; fail=$((fail + 1)); }
"$fabsim" plot "$tmp/nonexistent" > /dev/null 2>&1 && { echo "FAIL plot accepted a missing dir"; fail=$((fail + 1)); }
if [ "$fail" -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
[ "$fail" -eq 0 ]
