#!/usr/bin/env bash
# SIGINT and SIGTERM (issue 14; README "Exit codes"): a sweep interrupted after its first case
# writes that case, marks the interrupted one and the one not started, and exits 130; a single
# run stopped by SIGTERM writes its partial summary marked interrupted and exits 143; an
# interrupted comparison writes what it has, names the scenarios not started and exits 130; a
# run whose heap grows past --max-memory is stopped the same way and exits 2.
# Usage: cli_signals.sh FABSIM_BINARY
set -u
set -m  # job control: background jobs get their own process group and do not ignore SIGINT
fabsim="$1"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2> /dev/null; rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

# Two hosts, one sendrecv of "$size": 1 MiB takes milliseconds, 1 TiB minutes of wall time (it
# is interrupted long before), the third case never starts.
cat > "$tmp/sweep.toml" << 'EOF'
name = "sigsweep"
[simulation]
stop_time = "1000s"
[topology]
kind = "single_switch"
hosts = 2
[workload]
kind = "jobs"
[[workload.jobs]]
gpus = [0, 1]
[[workload.jobs.ops]]
type = "sendrecv"
bytes = "$size"
[sweep]
sizes = ["1MiB", "1024GiB", "2MiB"]
EOF

# Waits until `file` contains `text` (at most 120 s), or the process ended.
wait_for() {
  local file="$1" text="$2" i
  for i in $(seq 1 1200); do
    grep -qF -- "$text" "$file" 2> /dev/null && return 0
    kill -0 "$pid" 2> /dev/null || return 1
    sleep 0.1
  done
  return 1
}

# --- a sweep, SIGINT after the first case ---
"$fabsim" run "$tmp/sweep.toml" --threads 1 --out "$tmp/sweep" > "$tmp/sweep.out" \
  2> "$tmp/sweep.err" &
pid=$!
wait_for "$tmp/sweep.err" "[fabsim] case 1/3" && ok || bad "sweep: first case never finished"
kill -INT "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" -eq 130 ] && ok || bad "sweep: exit $rc, expected 130"
grep -q "^INTERRUPTED by SIGINT: 1 of 3 cases finished, 1 interrupted, 1 not started" \
  "$tmp/sweep.out" && ok || bad "sweep: no INTERRUPTED line on stdout"
grep -q "interrupted by SIGINT.*(exit 130)" "$tmp/sweep.err" && ok || bad "sweep: stderr"
s="$tmp/sweep/summary.json"
grep -q '"reason": "SIGINT"' "$s" && grep -q '"finished": 1' "$s" &&
  grep -q '"not_started": 1' "$s" && ok || bad "sweep: summary.json not marked interrupted"
grep -q "^,1048576,1,.*,done$" "$tmp/sweep/cases.csv" &&
  grep -q "^,1099511627776,1,.*,interrupted$" "$tmp/sweep/cases.csv" &&
  grep -q "^,2097152,1,.*,not_started$" "$tmp/sweep/cases.csv" && ok ||
  bad "sweep: cases.csv statuses"
[ "$(wc -l < "$tmp/sweep/sweep.csv")" -eq 2 ] && ok || bad "sweep: sweep.csv rows"
d="$tmp/sweep/cases"
grep -q '"all_flows_done": true' "$d/case-1048576-seed1/summary.json" &&
  ! grep -q '"interrupted"' "$d/case-1048576-seed1/summary.json" && ok ||
  bad "sweep: the finished case"
grep -q '"interrupted"' "$d/case-1099511627776-seed1/summary.json" && ok ||
  bad "sweep: the interrupted case's partial summary"
[ ! -e "$d/case-2097152-seed1" ] && ok || bad "sweep: a case that never started was written"
ls -d "$tmp"/sweep.partial-* > /dev/null 2>&1 && bad "sweep: staging directory left" || ok

# --- a single run, SIGTERM ---
cat > "$tmp/run.toml" << 'EOF'
name = "sigrun"
[simulation]
stop_time = "1000s"
[topology]
kind = "single_switch"
hosts = 2
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 1
bytes = "1024GiB"
EOF
"$fabsim" run "$tmp/run.toml" --out "$tmp/run" > "$tmp/run.out" 2> "$tmp/run.err" &
pid=$!
sleep 1
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" -eq 143 ] && ok || bad "run: exit $rc, expected 143"
grep -q "^INTERRUPTED by SIGTERM at" "$tmp/run.out" && ok || bad "run: no INTERRUPTED line"
grep -q "flows completed *0/1" "$tmp/run.out" && ok || bad "run: summary table"
grep -q '"reason": "SIGTERM"' "$tmp/run/summary.json" &&
  grep -q '"all_flows_done": false' "$tmp/run/summary.json" && ok ||
  bad "run: summary.json not marked interrupted"
[ -s "$tmp/run/flows.csv" ] && ok || bad "run: flows.csv"

# --- a comparison, SIGINT during its first scenario ---
sed 's/name = "sigsweep"/name = "other"/' "$tmp/sweep.toml" > "$tmp/other.toml"
"$fabsim" compare "$tmp/sweep.toml" "$tmp/other.toml" --threads 1 --no-plot \
  --out "$tmp/cmp" > "$tmp/cmp.out" 2> "$tmp/cmp.err" &
pid=$!
sleep 2
kill -INT "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" -eq 130 ] && ok || bad "compare: exit $rc, expected 130"
grep -q "INTERRUPTED by SIGINT.*not started: other" "$tmp/cmp/compare.txt" && ok ||
  bad "compare: compare.txt not marked"
grep -q '"reason": "SIGINT"' "$tmp/cmp/sigsweep/summary.json" && ok ||
  bad "compare: the interrupted scenario's summary"
[ ! -e "$tmp/cmp/other" ] && ok || bad "compare: a scenario that never started was written"

# --- a run that grows past --max-memory (docs/SCENARIOS.md "Memory") ---
# The estimate before the run (about 4 MiB: the network and the flow records) passes 8 MiB; the
# run's heap grows past it (about 14 MiB with its packets in flight), and the memory watch stops
# it as a signal would, with the resource guard's exit code.
cat > "$tmp/mem.toml" << 'EOF'
name = "memrun"
[topology]
kind = "leaf_spine"
servers = 1024
gpus_per_server = 1
servers_per_leaf = 32
spines = 32
[transport]
kind = "uet"
[workload]
kind = "permutation"
bytes = "64MiB"
EOF
"$fabsim" validate "$tmp/mem.toml" --max-memory 8MiB > /dev/null 2>&1 && ok ||
  bad "memory: the estimate does not pass 8 MiB"
"$fabsim" run "$tmp/mem.toml" --max-memory 8MiB --out "$tmp/mem" > "$tmp/mem.out" 2> "$tmp/mem.err"
rc=$?
[ "$rc" -eq 2 ] && ok || bad "memory: exit $rc, expected 2"
grep -q "^INTERRUPTED by the memory limit (--max-memory)" "$tmp/mem.out" && ok ||
  bad "memory: no INTERRUPTED line"
grep -q "resident memory (heap) reached .*past the limit of 8.0 MiB" "$tmp/mem.err" && ok ||
  bad "memory: stderr does not say what passed the limit"
grep -q '"reason": "the memory limit (--max-memory)"' "$tmp/mem/summary.json" &&
  grep -q '"all_flows_done": false' "$tmp/mem/summary.json" && ok ||
  bad "memory: summary.json not marked"

echo "signals: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
