#!/usr/bin/env bash
# The full GSE vs RoCEv2 comparison on seed 002's testbed (docs/VALIDATION.md): both leaf
# speed-ups, AllToAll and ring AllReduce from 1 to 512 MiB over 10 seeds, RoCEv2 against GSE as
# seed 002 tested it (DGSQ, no PFC) and with seed 000's source-local PFC; then one job on all 32
# GPUs, 1 and 4 leaf uplinks down, and GSE-E2E against GSE-N2N.
# Usage: tools/compare.sh [FABSIM] [OUT_DIR] [SEEDS]   (defaults: the release build, results/compare, 1-10)
# About 35 minutes on 2 cores (33 min measured 2026-11-21). Every block writes OUT_DIR/<block>/compare.txt and the figure.
set -euo pipefail
cd "$(dirname "$0")/.."
fabsim="${1:-build/release/apps/fabsim/fabsim}"
out="${2:-results/compare}"
seeds="${3:-1-10}"
for r in 1.5to1 2to1; do
  echo "== seed 002 testbed, leaf speed-up ${r/to/:}, 8 jobs x 4 GPUs"
  "$fabsim" compare "scenarios/seed002-roce-$r.toml" "scenarios/seed002-gse-$r.toml" \
    "scenarios/seed002-gse-pfc-$r.toml" --seeds "$seeds" --out "$out/$r"
done
echo "== one job on all 32 GPUs, 2:1"
"$fabsim" compare scenarios/seed002-roce-1job-2to1.toml scenarios/seed002-gse-1job-2to1.toml \
  --set 'sweep.sizes=["1MiB","16MiB","128MiB"]' --seeds "$seeds" --out "$out/1job-2to1"
for n in 1 4; do
  echo "== $n leaf uplink(s) down at 1 ms, 64 MiB, 2:1"
  "$fabsim" compare "scenarios/seed002-fault-${n}link-2to1.toml" \
    "scenarios/seed002-gse-fault-${n}link-2to1.toml" --seeds "$seeds" --out "$out/fault-${n}link-2to1"
done
echo "== GSE-N2N against GSE-E2E (PKTC and reordering only: DGSQ is modelled at the N2N leaf), 2:1"
"$fabsim" compare 'scenarios/seed002-gse-pfc-2to1.toml@name="gse-n2n-2to1"@fabric.gse.dgsq=false' \
  'scenarios/seed002-gse-pfc-2to1.toml@name="gse-e2e-2to1"@fabric.gse.dgsq=false@fabric.gse.mode="e2e"' \
  --set 'sweep.sizes=["1MiB","16MiB","64MiB","256MiB"]' --seeds "$seeds" --out "$out/e2e-vs-n2n-2to1"
echo "== security cost: PHYSec link- and channel-level, MACsec, IPsec, PSP on RoCEv2, 2:1 (docs/SECURITY.md)"
sec=scenarios/security-2to1.toml
"$fabsim" compare "$sec" "$sec@name=\"physec-link\"@security.kind=\"physec_link\"" \
  "$sec@name=\"physec-channel\"@security.kind=\"physec_channel\"" "$sec@name=\"macsec\"@security.kind=\"macsec\"" \
  "$sec@name=\"ipsec\"@security.kind=\"ipsec\"" "$sec@name=\"psp\"@security.kind=\"psp\"" \
  --seeds "$seeds" --out "$out/security-2to1"
