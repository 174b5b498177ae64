#!/usr/bin/env bash
# Runs each libFuzzer target of a fuzz build (`make fuzz`; docs/ROBUSTNESS.md) for SECONDS, one
# process each, and prints what libFuzzer reports. Exit 1 if any target found something: the
# input that triggered it is in BUILD/fuzz/findings/ (re-run it with `TARGET FILE`).
#
#   tools/fuzz.sh BUILD_DIR SECONDS
set -euo pipefail
build="${1:?usage: fuzz.sh BUILD_DIR SECONDS}"
seconds="${2:?usage: fuzz.sh BUILD_DIR SECONDS}"
src="$(cd "$(dirname "$0")/.." && pwd)"
dir="$build/fuzz"
mkdir -p "$dir/corpus/scenario" "$dir/corpus/units" "$dir/seeds/units" "$dir/findings"

# Scenario seeds: the shipped scenarios, and valid scenarios of every kind from the soak's
# generator (tools/soak.py), so the fuzzer starts from the keys of every family.
rm -rf "$dir/seeds/scenario"
/usr/bin/python3 "$src/tools/soak.py" --fabsim none --count 60 --seed 1 \
  --emit "$dir/seeds/scenario" > /dev/null

# One seed file per line of fuzz/seeds/units.txt (the quantity without its newline).
n=0
while IFS= read -r line; do
  printf '%s' "$line" > "$dir/seeds/units/seed$n"
  n=$((n + 1))
done < "$src/fuzz/seeds/units.txt"

status=0
run() {  # target, corpus dirs..., -- libFuzzer options...
  local target="$1"
  shift
  echo "== $target: $seconds s"
  if ! "$dir/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$dir/findings/$target-" "$@"; then
    echo "== $target: FINDING (see $dir/findings/)"
    status=1
  fi
}
# New inputs go to the first directory (the working corpus); the others are read-only seeds.
run fuzz_scenario -max_len=16384 -dict="$dir/scenario.dict" \
  "$dir/corpus/scenario" "$src/scenarios" "$dir/seeds/scenario"
run fuzz_units -max_len=64 "$dir/corpus/units" "$dir/seeds/units"
exit $status
