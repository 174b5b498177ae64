#!/usr/bin/env bash
# bench/paired.py's own checks: a slower command A shows a pair ratio above 1, and a command
# that fails makes the timing fail instead of printing figures for it. Not pinned (--cpu -1):
# the test machine may not offer processor 1.
set -euo pipefail
paired="$1"
out=$(/usr/bin/python3 "$paired" -n 3 --warmup 0 --cpu -1 --base "/bin/sleep 0.01" -- /bin/sleep 0.05)
echo "$out"
grep -q "^pairs 3, pinned to none$" <<<"$out"
median=$(awk '$1 == "A/B" && $2 == "wall" {print $4}' <<<"$out")
# 50 ms against 10 ms, plus a few ms of start-up on each side: well above 1.5.
awk -v r="$median" 'BEGIN { exit !(r > 1.5) }' || { echo "median wall ratio $median, expected > 1.5"; exit 1; }
if /usr/bin/python3 "$paired" -n 1 --warmup 0 --cpu -1 --base /bin/true -- /bin/false 2>/dev/null; then
  echo "a failing command A must fail the timing"
  exit 1
fi
echo "ok"
