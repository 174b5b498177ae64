#!/usr/bin/env bash
# The traces shipped under examples/traces/ are what tools/make_traces.py writes (issue 19 item
# 4): regenerate them into a scratch directory and compare byte for byte.
set -euo pipefail
root=$1
out=$2
rm -rf "$out"
/usr/bin/python3 "$root/tools/make_traces.py" --out "$out"
n=0
for f in "$root"/examples/traces/*; do
  cmp "$f" "$out/$(basename "$f")"
  n=$((n + 1))
done
[ "$(ls "$out" | wc -l)" -eq "$n" ]
echo "traces: $n identical"
