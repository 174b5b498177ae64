#!/usr/bin/env bash
# Safe outputs (issue 14): --out is checked before simulating, an earlier result is replaced as a
# whole (no stale file mixes in), a directory of other files is refused, names are file-safe.
set -u
fabsim="$1"
src="$2"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
q="$src/scenarios/quickstart.toml"
# An earlier result with a stale file: replaced whole.
mkdir -p "$tmp/r" && echo '{}' > "$tmp/r/summary.json" && echo stale > "$tmp/r/stale.txt"
"$fabsim" run "$q" --out "$tmp/r" > /dev/null 2>&1 && ok || bad "run into an earlier result"
[ ! -e "$tmp/r/stale.txt" ] && ok || bad "stale file survived"
[ -s "$tmp/r/flows.csv" ] && ok || bad "no flows.csv"
ls -d "$tmp"/r.partial-* > /dev/null 2>&1 && bad "staging directory left behind" || ok
# A directory with other files is not a result: refused (exit 2), untouched.
mkdir -p "$tmp/mine" && echo keep > "$tmp/mine/notes.txt"
"$fabsim" run "$q" --out "$tmp/mine" > /dev/null 2> "$tmp/err"
[ $? -eq 2 ] && ok || bad "other files: exit code"
grep -q "holds other files" "$tmp/err" && ok || bad "other files: message"
[ -e "$tmp/mine/notes.txt" ] && ok || bad "other files were touched"
# An unwritable place fails before anything is simulated (exit 1, no summary table).
mkdir -p "$tmp/ro" && chmod a-w "$tmp/ro"
if [ "$(id -u)" != "0" ]; then
  "$fabsim" run "$q" --out "$tmp/ro/out" > "$tmp/out" 2> "$tmp/err"
  [ $? -eq 1 ] && ok || bad "unwritable: exit code"
  grep -q "flows completed" "$tmp/out" && bad "unwritable: simulated first" || ok
fi
"$fabsim" run "$q" --out /proc/fabsim-not-here > "$tmp/out" 2> "$tmp/err"
[ $? -eq 1 ] && ok || bad "/proc: exit code"
grep -q "flows completed" "$tmp/out" && bad "/proc: simulated first" || ok
# Names become directories: only a safe alphabet.
"$fabsim" validate "$q" --set 'name="x/../y"' > /dev/null 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "file-name-safe" "$tmp/err" && ok || bad "unsafe name accepted"
# compare: a name already taken gets the first free suffix, never one a column has (x-2 given,
# then x, then x again: x-2, x, x-3), so no column's directory overwrites another's.
cat > "$tmp/cmp.toml" <<'TOML'
[topology]
kind = "single_switch"
hosts = 4
[workload]
kind = "jobs"
[[workload.jobs]]
placement = "block"
ranks = 4
[[workload.jobs.ops]]
type = "allreduce_ring"
bytes = "64KiB"
TOML
"$fabsim" compare "$tmp/cmp.toml@name=\"x-2\"" "$tmp/cmp.toml@name=\"x\"" "$tmp/cmp.toml@name=\"x\"" \
  --no-plot --out "$tmp/cmp" > /dev/null 2>&1 && ok || bad "compare of three columns"
[ -d "$tmp/cmp/x-2" ] && [ -d "$tmp/cmp/x" ] && [ -d "$tmp/cmp/x-3" ] && ok || bad "compare column names"
echo "outputs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
