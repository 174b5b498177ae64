#!/usr/bin/env bash
# CLI behaviour on bad input: exit 2, a message naming the key, no output files. Also the
# degenerate scenarios and the resource guard of issue 14 (docs/SCENARIOS.md).
# Usage: cli_bad_input.sh FABSIM_BINARY
set -u
fabsim="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
passed=0

expect_error() {  # name, expected text in stderr, scenario text, extra args...
  local name="$1" want="$2" text="$3"
  shift 3
  printf '%s\n' "$text" > "$tmp/$name.toml"
  "$fabsim" run "$tmp/$name.toml" --out "$tmp/out-$name" "$@" > "$tmp/$name.stdout" 2> "$tmp/$name.stderr"
  local rc=$?
  if [ "$rc" -ne 2 ]; then echo "FAIL $name: exit $rc, expected 2"; fail=$((fail + 1)); return; fi
  if ! grep -qF -- "$want" "$tmp/$name.stderr"; then
    echo "FAIL $name: stderr lacks '$want':"; cat "$tmp/$name.stderr"; fail=$((fail + 1)); return
  fi
  if [ -e "$tmp/out-$name" ]; then echo "FAIL $name: output written"; fail=$((fail + 1)); return; fi
  passed=$((passed + 1))
}

expect_error unknown_key "topology.spinez" $'[topology]\nspinez = 4'
expect_error bad_unit "topology.nic_rate" $'[topology]\nnic_rate = "100GB"'
expect_error negative_rate "topology.uplink_rate" $'[topology]\nuplink_rate = "-400Gbps"'
expect_error inconsistent "topology.servers_per_leaf" $'[topology]\nservers = 2\nservers_per_leaf = 3'
expect_error bad_set "network.ecn.pmax" '' --set network.ecn.pmax=2.0
expect_error no_such_cable "faults.events[0].link" $'[[faults.events]]\nlink = "leaf7-spine0"\nat = "1ms"'
expect_error stray_fault_key "faults.events[0].ber" $'[[faults.events]]\nlink = "leaf0-spine0"\naction = "down"\nber = 1e-3'
expect_error ber_without_rate "faults.events[0].ber" $'[[faults.events]]\nlink = "leaf0-spine0"\naction = "ber"'

# Degenerate scenarios (issue 14): a one-host network, no flow, nothing starting before the stop
# time.
expect_error one_host "key 'topology.kind'" $'[topology]\nservers = 1\ngpus_per_server = 1'
expect_error no_flows "key 'workload.flows'" $'[workload]\nkind = "flows"'
expect_error late_flows "key 'workload.start'" \
  $'[simulation]\nstop_time = "1ms"\n[workload]\nstart = "2ms"'
# The resource guard: requests that died in std::bad_alloc are refused naming their key.
jobs=$'[workload]\nkind = "jobs"\n[[workload.jobs]]\nplacement = "block"'
expect_error huge_ranks "key 'workload.jobs[0].placement'" \
  "$jobs"$'\nranks = 2147483647\n[[workload.jobs.ops]]\ntype = "alltoall"\nbytes = "1MiB"'
expect_error sample_1ps "key 'output.sample_interval'" $'[output]\nsample_interval = "1ps"'
tree=$'[workload]\nkind = "jobs"\ntree_chunk = 1\n[[workload.jobs]]\nplacement = "block"\nranks = 32'
expect_error tree_chunk "key 'workload.tree_chunk'" \
  "$tree"$'\n[[workload.jobs.ops]]\ntype = "allreduce_tree"\nbytes = "1GiB"'
expect_error max_memory "more than the limit of 1.0 KiB (--max-memory)" '' --max-memory 1KiB
expect_error bad_max_memory "--max-memory: expected" '' --max-memory 8GB!

# Validate applies the same checks and prints the estimate.
"$fabsim" validate "$tmp/huge_ranks.toml" > /dev/null 2> "$tmp/v.stderr"
[ $? -eq 2 ] && grep -qF "workload.jobs[0].placement" "$tmp/v.stderr" && passed=$((passed + 1)) ||
  { echo "FAIL validate huge ranks"; fail=$((fail + 1)); }
"$fabsim" validate "$tmp/sample_1ps.toml" > /dev/null 2> "$tmp/v.stderr"
[ $? -eq 2 ] && grep -qF "output.sample_interval" "$tmp/v.stderr" && passed=$((passed + 1)) ||
  { echo "FAIL validate sample_interval"; fail=$((fail + 1)); }
"$fabsim" validate "$tmp/bad_set.toml" > "$tmp/v.stdout" 2> /dev/null
grep -q "^memory estimate: .* (limit " "$tmp/v.stdout" && passed=$((passed + 1)) ||
  { echo "FAIL validate prints no estimate"; fail=$((fail + 1)); }

# Some flows start after the stop time: a warning naming the key, the run goes on (exit 3: they
# never finish).
printf '%s\n' '[simulation]' 'stop_time = "1ms"' '[workload]' 'kind = "flows"' \
  '[[workload.flows]]' 'src = 0' 'dst = 1' '[[workload.flows]]' 'src = 1' 'dst = 2' \
  'start = "5ms"' > "$tmp/late_some.toml"
"$fabsim" run "$tmp/late_some.toml" > /dev/null 2> "$tmp/w.stderr"
rc=$?
warning="fabsim: warning: $tmp/late_some.toml: key 'workload.flows[1].start'"
if [ "$rc" -eq 3 ] && grep -qF "$warning" "$tmp/w.stderr"; then
  passed=$((passed + 1))
else
  echo "FAIL late_some: rc=$rc"; cat "$tmp/w.stderr"; fail=$((fail + 1))
fi

# A GSE container shorter than one frame runs (one packet per container) with a warning.
printf '%s\n' '[fabric]' 'kind = "gse"' '[fabric.gse]' 'container = "1KiB"' > "$tmp/gse_small.toml"
"$fabsim" run "$tmp/gse_small.toml" > /dev/null 2> "$tmp/w.stderr"
rc=$?
warning="fabsim: warning: $tmp/gse_small.toml: key 'fabric.gse.container'"
if [ "$rc" -eq 0 ] && grep -qF "$warning" "$tmp/w.stderr"; then
  passed=$((passed + 1))
else
  echo "FAIL gse_small: rc=$rc"; cat "$tmp/w.stderr"; fail=$((fail + 1))
fi

"$fabsim" run "$tmp/does-not-exist.toml" --out "$tmp/out-missing" > /dev/null 2> "$tmp/missing.stderr"
rc=$?
if [ "$rc" -ne 0 ] && grep -qF "does-not-exist.toml" "$tmp/missing.stderr" && [ ! -e "$tmp/out-missing" ]; then
  passed=$((passed + 1))
else
  echo "FAIL missing_file: rc=$rc"; cat "$tmp/missing.stderr"; fail=$((fail + 1))
fi

"$fabsim" validate "$tmp/unknown_key.toml" > /dev/null 2>&1 && { echo "FAIL validate accepted a bad file"; fail=$((fail + 1)); } || passed=$((passed + 1))

# Validate builds the scenario without running it: what only the built network refuses is its
# error too (INT with departure marking, exit 2 naming the key), and what only the built
# transport finds is its warning (a UET RTO below a window's round trip), as from `run`.
printf '%s\n' '[network.ecn]' 'mark_at = "departure"' '[transport]' 'kind = "roce"' 'cc = "hpcc"' > "$tmp/int_departure.toml"
"$fabsim" validate "$tmp/int_departure.toml" > "$tmp/v.stdout" 2> "$tmp/v.stderr"
rc=$?
if [ "$rc" -eq 2 ] && grep -qF "key 'network.ecn.mark_at'" "$tmp/v.stderr" && ! grep -q "valid (" "$tmp/v.stdout"; then
  passed=$((passed + 1))
else
  echo "FAIL validate int_departure: rc=$rc"; cat "$tmp/v.stderr"; fail=$((fail + 1))
fi
printf '%s\n' '[transport]' 'kind = "uet"' '[transport.uet]' 'rto = "1us"' > "$tmp/uet_short_rto.toml"
"$fabsim" validate "$tmp/uet_short_rto.toml" > "$tmp/v.stdout" 2> "$tmp/v.stderr"
rc=$?
warning="fabsim: warning: $tmp/uet_short_rto.toml: key 'transport.uet.rto'"
if [ "$rc" -eq 0 ] && grep -qF "$warning" "$tmp/v.stderr" && grep -q ": valid (" "$tmp/v.stdout"; then
  passed=$((passed + 1))
else
  echo "FAIL validate uet_short_rto: rc=$rc"; cat "$tmp/v.stderr"; fail=$((fail + 1))
fi
# The built network's memory check applies to validate as to run (the loader's estimate, a
# lower bound, does not see the sampled switch ports).
printf '%s\n' '[simulation]' 'stop_time = "1ms"' '[output]' 'sample_interval = "1us"' > "$tmp/samples.toml"
"$fabsim" validate "$tmp/samples.toml" --max-memory 1MiB > /dev/null 2> "$tmp/v.stderr"
rc=$?
if [ "$rc" -eq 2 ] && grep -qF "key 'output.sample_interval'" "$tmp/v.stderr"; then
  passed=$((passed + 1))
else
  echo "FAIL validate samples over the limit: rc=$rc"; cat "$tmp/v.stderr"; fail=$((fail + 1))
fi
# Every case of a sweep is checked on the built network, not only the first one built: the
# loader's estimate of the largest case (97.7 MiB: 1 sampled port, a lower bound) and the built
# first case (alltoall, about 14 MiB with 16 sampled uplinks) pass 103 MiB, the tree case on the
# built network (about 109 MiB) does not.
printf '%s\n' '[simulation]' 'stop_time = "10ms"' '[topology]' 'kind = "leaf_spine"' 'servers = 4' \
  'gpus_per_server = 8' 'servers_per_leaf = 1' 'attach = "server"' 'spines = 4' \
  'uplink_rate = "400Gbps"' '[output]' 'sample_interval = "1us"' '[workload]' 'kind = "jobs"' \
  'tree_chunk = "256KiB"' '[[workload.jobs]]' 'placement = "block"' 'ranks = 32' \
  '[[workload.jobs.ops]]' 'type = "$collective"' 'bytes = "$size"' '[sweep]' \
  'collectives = ["alltoall", "allreduce_tree"]' 'sizes = ["1GiB"]' > "$tmp/sweep_cases.toml"
"$fabsim" validate "$tmp/sweep_cases.toml" --max-memory 103MiB > /dev/null 2> "$tmp/v.stderr"
rc=$?
if [ "$rc" -eq 2 ] && grep -qF "more than the limit of 103.0 MiB" "$tmp/v.stderr"; then
  passed=$((passed + 1))
else
  echo "FAIL validate sweep_cases: rc=$rc"; cat "$tmp/v.stderr"; fail=$((fail + 1))
fi
"$fabsim" validate "$tmp/sweep_cases.toml" --max-memory 120MiB > /dev/null 2> "$tmp/v.stderr" &&
  passed=$((passed + 1)) || { echo "FAIL validate sweep_cases at 120 MiB"; cat "$tmp/v.stderr"; fail=$((fail + 1)); }
# An external workload starts nothing from the command line: validate refuses it as run does.
printf '%s\n' '[workload]' 'kind = "external"' > "$tmp/external.toml"
"$fabsim" validate "$tmp/external.toml" > /dev/null 2> "$tmp/v.stderr"
rc=$?
if [ "$rc" -eq 2 ] && grep -qF "workload.kind" "$tmp/v.stderr"; then
  passed=$((passed + 1))
else
  echo "FAIL validate external: rc=$rc"; cat "$tmp/v.stderr"; fail=$((fail + 1))
fi

echo "$passed passed, $fail failed"
[ "$fail" -eq 0 ]
