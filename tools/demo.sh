#!/usr/bin/env bash
# The main job of `make demo`: RoCEv2 against GSE (as seed 002 tested it) on seed 002's testbed
# at 2:1, AllToAll and ring AllReduce at 1, 16 and 64 MiB over seeds 1-3, side by side, with the
# JCT-vs-size figure. The full comparison is tools/compare.sh (docs/VALIDATION.md).
# Usage: tools/demo.sh [FABSIM] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
fabsim="${1:-build/release/apps/fabsim/fabsim}"
out="${2:-results/demo}"
exec "$fabsim" compare scenarios/seed002-roce-2to1.toml scenarios/seed002-gse-2to1.toml \
  --set 'sweep.sizes=["1MiB","16MiB","64MiB"]' --seeds 1-3 --out "$out"
