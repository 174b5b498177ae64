#!/usr/bin/env bash
# Exit codes (README "Exit codes"; issue 14): 0 complete, 2 bad input, 3 unfinished flows or
# failed senders, with the summary still printed and written.
set -u
fabsim="$1"
src="$2"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
check() {  # name, expected code, command...
  local name="$1" want="$2"
  shift 2
  "$@" > "$out/stdout" 2> "$out/stderr"
  local got=$?
  if [ "$got" -eq "$want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $name: exit $got, expected $want"; cat "$out/stderr"; fi
}
check complete 0 "$fabsim" run "$src/scenarios/quickstart.toml"
check bad-input 2 "$fabsim" run "$src/scenarios/quickstart.toml" --set topology.spines=0
# Stopped before the incast can finish: exit 3, the headline says so, the files are written.
check unfinished 3 "$fabsim" run "$src/scenarios/quickstart.toml" --set simulation.stop_time=100us \
  --out "$out/r"
grep -q "^INCOMPLETE: 15 of 15 flows unfinished" "$out/stdout" || { fail=$((fail + 1)); echo "FAIL headline"; }
grep -q '"all_flows_done": false' "$out/r/summary.json" || { fail=$((fail + 1)); echo "FAIL summary"; }
# A QP that exhausts its retries (every packet lost) fails the run even though it ended.
check failed-qp 3 "$fabsim" run "$src/scenarios/quickstart.toml" --set network.loss_probability=1.0 \
  --set transport.retry_limit=0 --set transport.rto_exponent=0
grep -q "15 senders failed" "$out/stdout" || { fail=$((fail + 1)); echo "FAIL failed senders"; }
echo "exit codes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
