#!/usr/bin/env bash
# `make demo` runs tools/demo.sh: its output must hold the side-by-side table (both fabrics'
# columns and a ratio per row) and name the figure it wrote. Usage: cli_demo.sh FABSIM SOURCE_DIR
set -u
fabsim="$1"
src="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$src/tools/demo.sh" "$fabsim" "$tmp/demo" > "$tmp/out.txt" 2> "$tmp/err.txt" || { echo "demo failed"; cat "$tmp/err.txt"; exit 1; }
cat "$tmp/out.txt"
fail=0
grep -qE "seed002-roce-2to1 +seed002-gse-2to1 +ratio 2" "$tmp/out.txt" || { echo "FAIL: no header with both fabrics"; fail=1; }
num='[0-9][0-9.e+-]*'
rows=$(grep -cE "^(alltoall|allreduce_ring) +[0-9]+ MiB +$num \[$num, $num\] +$num \[$num, $num\] +$num \[$num, $num\]" "$tmp/out.txt")
[ "$rows" -eq 6 ] || { echo "FAIL: expected 6 rows with both JCTs and a ratio, got $rows"; fail=1; }
grep -q "figure: $tmp/demo/plots/jct_vs_size.png" "$tmp/out.txt" || { echo "FAIL: figure not named"; fail=1; }
[ -s "$tmp/demo/plots/jct_vs_size.png" ] || { echo "FAIL: figure missing"; fail=1; }
[ -s "$tmp/demo/compare.csv" ] || { echo "FAIL: compare.csv missing"; fail=1; }
exit $fail
